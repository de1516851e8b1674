/**
 * Secrets we mint (contract preamble): API keys `psk_<environment>_` + base64url of 32 random bytes, stored
 * only as an HMAC-SHA256 with `API_KEY_PEPPER`; signing secrets `whsec_` + standard base64 of 32 random
 * bytes (the Standard Webhooks format).
 */
import { createHmac } from "node:crypto";
import type { Environment } from "../config.ts";

const SECRET_BYTES = 32;

/** A new API key secret for an environment. */
export function mintApiKeySecret(environment: Environment): string {
  return `psk_${environment}_${Buffer.from(crypto.getRandomValues(new Uint8Array(SECRET_BYTES))).toString("base64url")}`;
}

/** What is stored of an API key secret: HMAC-SHA256 with the pepper, hex. */
export function hashApiKeySecret(pepper: string, secret: string): string {
  return createHmac("sha256", pepper).update(secret).digest("hex");
}

/** The part of an API key secret shown in lists: its environment prefix and first characters. */
export function apiKeyDisplayPrefix(secret: string): string {
  const environmentPrefix = secret.startsWith("psk_live_") ? "psk_live_" : "psk_sandbox_";
  return secret.slice(0, environmentPrefix.length + 6);
}

/** A new signing secret for webhooks and callbacks. */
export function mintSigningSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(SECRET_BYTES))).toString("base64")}`;
}

/** Secrets shorter than this are masked whole: four characters shown would be most of them. */
export const MASK_SHOWS_TAIL_FROM = 12;

/**
 * A secret for masked views: `…` and its last four characters (`…c3f9`), or `…` alone when it has fewer
 * than {@link MASK_SHOWS_TAIL_FROM} characters.
 */
export function maskSecret(value: string): string {
  return value.length < MASK_SHOWS_TAIL_FROM ? "…" : `…${value.slice(-4)}`;
}

/**
 * A new single-use link token (an invitation's, a password reset's): `<prefix>_` + base64url of 32 random
 * bytes. Stored only as {@link hashLinkToken}.
 */
export function mintLinkToken(prefix: "inv" | "pwr"): string {
  return `${prefix}_${Buffer.from(crypto.getRandomValues(new Uint8Array(SECRET_BYTES))).toString("base64url")}`;
}

/** What is stored of a link token: HMAC-SHA256 with the pepper (as an API key secret), hex. */
export function hashLinkToken(pepper: string, token: string): string {
  return createHmac("sha256", pepper).update(`link\u0000${token}`).digest("hex");
}
