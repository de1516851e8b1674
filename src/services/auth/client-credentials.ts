/**
 * The client of an OAuth2 token request (RFC 6749 §2.3.1): its id and secret in the body, or in
 * `Authorization: Basic base64(urlencode(id) ":" urlencode(secret))` — what OAuth2 libraries send by
 * default (`client_secret_basic`). A client uses one method per request; both at once is refused.
 */
import { BadRequestError, UnauthorizedError } from "../../errors.ts";

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** `application/x-www-form-urlencoded` decoding of one part: `+` is a space, then percent-decoding. */
function formDecode(part: string): string {
  try {
    return decodeURIComponent(part.replaceAll("+", " "));
  } catch {
    throw new BadRequestError("Authorization header holds a malformed percent-encoding");
  }
}

const MALFORMED_BASIC = "Authorization header must be 'Basic <base64 of client_id:client_secret>'";

function basicCredentials(header: string): ClientCredentials | undefined {
  if (!/^Basic( |$)/i.test(header)) return undefined;
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) throw new BadRequestError(MALFORMED_BASIC);
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1) throw new BadRequestError(MALFORMED_BASIC);
  return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
}

/**
 * The request's client credentials, from the `Authorization: Basic` header or the body. Throws a 400 for
 * both at once or a malformed header, and a 401 when the client did not authenticate at all (RFC 6749
 * §5.2 `invalid_client`). Other `Authorization` schemes are not client authentication and are ignored.
 */
export function clientCredentials(headers: Headers, body: { client_id?: string; client_secret?: string }): ClientCredentials {
  const header = headers.get("authorization");
  const basic = header === null ? undefined : basicCredentials(header);
  const inBody = body.client_id !== undefined || body.client_secret !== undefined;
  if (basic && inBody) throw new BadRequestError("Send the client credentials once: in the Authorization header or in the body, not both");
  if (basic) return basic;
  if (body.client_id === undefined || body.client_secret === undefined)
    throw new UnauthorizedError("Client authentication is required: client_id and client_secret, in the body or as HTTP Basic");
  return { clientId: body.client_id, clientSecret: body.client_secret };
}
