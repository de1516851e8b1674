/**
 * The provider's key check, done once for every API route: `PAYDUNYA-MASTER-KEY` names the account, and
 * `PAYDUNYA-PRIVATE-KEY`, `PAYDUNYA-TOKEN` (and `PAYDUNYA-PUBLIC-KEY` when sent) must be that account's.
 * An account's keys work on both the sandbox and the live paths (a simulator has no KYC to pass).
 */
import type { MerchantAccount, SimulatorStore } from "./store.ts";
import { RESPONSE_CODES, refusal } from "./wire.ts";

/**
 * The account the request's key headers belong to, or the provider's 401 refusal naming the first wrong key.
 *
 * @example
 * const { account, refused } = authenticateMerchant(store, request.headers);
 * if (refused) return refused;
 */
export function authenticateMerchant(
  store: SimulatorStore,
  headers: Headers,
): { account: MerchantAccount; refused?: undefined } | { account?: undefined; refused: Response } {
  const refuse = (text: string) => ({ refused: refusal(401, RESPONSE_CODES.invalidKeys, text) });
  const account = store.accounts.get(headers.get("paydunya-master-key") ?? "");
  if (!account) return refuse("Invalid Masterkey Specified");
  if (headers.get("paydunya-private-key") !== account.privateKey) return refuse("Invalid Private Key Specified");
  if (headers.get("paydunya-token") !== account.token) return refuse("Invalid Token Specified");
  const publicKey = headers.get("paydunya-public-key");
  if (publicKey !== null && publicKey !== account.publicKey) return refuse("Invalid Public Key Specified");
  return { account };
}
