/**
 * The document's tags, each with its description (a tag missing here is listed undescribed, which the
 * linters refuse), and what each procedure base means for
 * the caller, which becomes the start of an operation's description.
 *
 * @module
 */

/** The tag every operator-only operation carries, besides its area's. */
export const OPERATOR_TAG = "operator only";

/** Every tag, in the order the reference shows them. */
export const TAGS: Record<string, string> = {
  auth: "Tokens: exchange an API key for a short-lived token (OAuth2 client credentials), and see who a token is",
  payments: "Collections: create a payment (the gateway picks the provider), read and list them",
  providerA: "Provider A (USSD mobile money): direct payments and their status, and the provider's webhooks",
  providerB: "Provider B (hosted checkout): checkouts and the provider's IPN",
  permits: "Provider B's pre-authorised debits: permits, their charges and renewal schedules",
  "payment links": "Links any customer pays from a phone: their URL, QR code and share texts, and their payments",
  "pay page": "The public calls of a payment link's pay page (/pay/{id}): no token, limited per address",
  payouts: "Money out to a wallet",
  refunds: "Refunds of a payment, paid as payouts",
  balance: "The tenant's ledger: balance and entries",
  reports: "Reconciliation reports, as JSON or CSV",
  routing: "Which provider serves which operator and country, and how well",
  events: "The event log: everything that happened to the tenant's payments, payouts and permits (30 days)",
  webhooks: "Webhook endpoints, their deliveries, retries and replays (Standard Webhooks; see the `webhooks` section)",
  tenants: "Tenants and their callback secret",
  credentials: "A tenant's own provider accounts (sealed at rest, shown masked)",
  "api keys": "A tenant's API keys",
  people: "The people of a shop who sign in to the dashboard: invitations, roles, passwords, and the shop's audit log (docs/team.md)",
  admin: "Operator reports across tenants, every shop's audit log, and the operator's staff",
  [OPERATOR_TAG]: "Operations that need an operator's (admin) token or a person of the operator's staff: a tenant's token or API key gets 403 `forbidden`",
  operations: "Health probes and the index",
};

/** How each procedure base authorises a call, as the first sentence of its operations' descriptions. */
export const BASE_DESCRIPTIONS = {
  public: "Public: no token.",
  authenticated: "Any valid token: an operator's or a tenant's (or a person's dashboard session).",
  person:
    "A person signed in to the dashboard: the session cookie (`passerelle_session`, from `POST /people/sign-in`), with the session's `x-csrf-token` on a call that changes something. No token acts as a person.",
  admin: "**Operator only**: needs an operator's (admin) token, or the operator's staff signed in; a tenant's token or API key gets 403.",
  tenantOwner:
    "A tenant's token or API key on its own tenant only (another tenant's id is 404); an operator's token on any tenant (and may pick the environment with `x-environment`). A person's dashboard session acts as its shop's token within the person's role (`x-csrf-token` on a change).",
  tenant:
    "A tenant's token or API key acts on its own tenant; an operator's token names the tenant with `x-tenant-id` (and may pick the environment with `x-environment`). A person's dashboard session acts as its shop's token within the person's role (`x-csrf-token` on a change).",
} as const;
