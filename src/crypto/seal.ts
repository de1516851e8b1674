/**
 * Sealing secrets at rest (contract §3): AES-256-GCM through Web Crypto, a fresh 96-bit IV per value, the
 * tenant id and the field name as additional authenticated data — so a ciphertext copied to another
 * tenant or another field fails to open — and a key version in front: `v<N>:<base64(iv|ciphertext|tag)>`.
 * The first key of the ring seals; every key opens.
 *
 * @example
 * ```ts
 * const ring = await createKeyring(config.encryptionKeys);
 * const sealed = await ring.seal("sk_live_123", { tenantId, field: "providerA.secretKey" });
 * const plain = await ring.open(sealed, { tenantId, field: "providerA.secretKey" });
 * ```
 */
import type { EncryptionKey } from "../config.ts";

/** Whose value this is and which field it fills: bound into the ciphertext. */
export interface SealContext {
  tenantId: string;
  field: string;
}

/** A sealed value that cannot be opened: wrong key, wrong tenant or field, or tampered. */
export class SealError extends Error {
  override name = "SealError";
}

export interface Keyring {
  /** The version new values are sealed with. */
  readonly currentVersion: number;
  seal(plaintext: string, context: SealContext): Promise<string>;
  open(sealed: string, context: SealContext): Promise<string>;
  /** The key version a sealed value names, or null when it is not a sealed value. */
  versionOf(sealed: string): number | null;
}

const IV_BYTES = 12;
const FORMAT = /^v(\d+):([A-Za-z0-9+/]+=*)$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function additionalData(context: SealContext): Uint8Array<ArrayBuffer> {
  // A separator that cannot appear in either part keeps ("a", "b:c") apart from ("a:b", "c").
  return encoder.encode(`${context.tenantId}\u0000${context.field}`);
}

/** Imports the configured keys once; the keyring is then cheap to use. */
export async function createKeyring(keys: EncryptionKey[]): Promise<Keyring> {
  if (keys.length === 0) throw new Error("At least one encryption key is needed");
  const imported = new Map<number, CryptoKey>();
  for (const { version, key } of keys) {
    if (key.length !== 32) throw new Error(`Encryption key ${version} is not 32 bytes`);
    imported.set(version, await crypto.subtle.importKey("raw", new Uint8Array(key), { name: "AES-GCM" }, false, ["encrypt", "decrypt"]));
  }
  const currentVersion = keys[0]!.version;
  const sealingKey = imported.get(currentVersion)!;

  return {
    currentVersion,
    async seal(plaintext, context) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const ciphertext = new Uint8Array(
        await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: additionalData(context) }, sealingKey, encoder.encode(plaintext)),
      );
      const out = new Uint8Array(IV_BYTES + ciphertext.length);
      out.set(iv, 0);
      out.set(ciphertext, IV_BYTES);
      return `v${currentVersion}:${Buffer.from(out).toString("base64")}`;
    },
    async open(sealed, context) {
      const match = FORMAT.exec(sealed);
      if (!match) throw new SealError("Not a sealed value");
      const key = imported.get(Number(match[1]));
      if (!key) throw new SealError(`No encryption key with version ${match[1]}`);
      const bytes = Buffer.from(match[2]!, "base64");
      if (bytes.length <= IV_BYTES + 16) throw new SealError("Sealed value is too short");
      try {
        const plain = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES), additionalData: additionalData(context) },
          key,
          bytes.subarray(IV_BYTES),
        );
        return decoder.decode(plain);
      } catch {
        throw new SealError("Sealed value cannot be opened (wrong key, tenant or field, or tampered)");
      }
    },
    versionOf(sealed) {
      const match = FORMAT.exec(sealed);
      return match ? Number(match[1]) : null;
    },
  };
}
