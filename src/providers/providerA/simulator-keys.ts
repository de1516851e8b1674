/**
 * The keys of the service's own provider A account on the mounted simulator, derived from a secret of the
 * deployment (`JWT_SECRET`) so that every process of it uses the same account without asking anyone
 * (issue 25; the account is made known to the simulator by `simulator/service-accounts.ts`).
 *
 * @module
 */
import { createHmac } from "node:crypto";
import type { Environment } from "../provider.ts";

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function derived(secret: string, label: string, length: number): string {
  const bytes = createHmac("sha256", secret).update(`passerelle simulator service account: ${label}`).digest();
  let out = "";
  for (let index = 0; index < length; index++) out += BASE62[bytes[index]! % BASE62.length];
  return out;
}

/**
 * The keys of the service's provider A account of `environment` on the simulators, the same in every process
 * given the same `secret` (the gateway's `JWT_SECRET`), in the simulator's own shapes.
 *
 * @example
 * ```ts
 * simulatorServiceAccountKeys(config.jwt.secret, "sandbox"); // { secretKey: "sk_sandbox_…", webhookSecret: "wh_sandbox_…" }
 * ```
 */
export function simulatorServiceAccountKeys(secret: string, environment: Environment): { secretKey: string; webhookSecret: string } {
  return {
    secretKey: `sk_${environment}_${derived(secret, `${environment} secret key`, 32)}`,
    webhookSecret: `wh_${environment}_${derived(secret, `${environment} webhook secret`, 32)}`,
  };
}
