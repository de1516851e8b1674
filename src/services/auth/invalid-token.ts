/**
 * RFC 6750 §3.1 `invalid_token`, as a value of the contract's error classes: still a 401 `unauthorized`
 * (contract §1); its class tells the HTTP layer to name the error in the `WWW-Authenticate` challenge.
 */
import { UnauthorizedError } from "../../errors.ts";

/** A bearer token was sent and refused (malformed, forged, expired, revoked, an unknown API key). */
export class InvalidTokenError extends UnauthorizedError {
  override name = "InvalidTokenError";
}
