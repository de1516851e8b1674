/**
 * Every gateway response a test receives is checked against the OpenAPI document, so the document cannot
 * drift from what the gateway answers: a status the operation does not list, a content type it does not
 * list, a header it does not declare (beyond HTTP's own: see {@link TRANSPORT_HEADERS}), a required header
 * missing, a header or a JSON body that does not match its schema — each throws, failing the test.
 *
 * Bodies are checked with Ajv's JSON Schema 2020-12 validator (OpenAPI 3.1's dialect) against the
 * document's own schemas, formats included (ajv-formats: `date-time`, `uri`…). Only requests to a
 * documented path and method are checked: `/trpc`, `/docs`, the dashboard and the simulators are not in
 * the document.
 *
 * Where it runs: {@link TestGateway.request} (test/support/gateway.ts) and every `fetch` to a gateway that
 * `startTestGateway`'s gateway started listening (its origin is registered with {@link watchGatewayOrigin}).
 *
 * @module
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { brotliDecompressSync } from "node:zlib";
import { generateOpenApi } from "../../src/mod.ts";

/** Headers of HTTP itself, CORS and caching, which no operation declares. */
const TRANSPORT_HEADERS = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "date",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "vary",
  "server",
]);
const isTransportHeader = (name: string) => TRANSPORT_HEADERS.has(name) || name.startsWith("access-control-");

interface HeaderObject {
  required?: boolean;
  schema?: Record<string, unknown>;
  $ref?: string;
}
interface ResponseObject {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema?: unknown }>;
}
interface OperationObject {
  responses: Record<string, ResponseObject>;
}
interface Document {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, unknown>; headers?: Record<string, HeaderObject> };
}

interface Route {
  template: string;
  pattern: RegExp;
  parameters: number;
  item: Record<string, OperationObject>;
}

interface Validator {
  document: Document;
  routes: Route[];
  ajv: Ajv2020;
  compiled: Map<string, ValidateFunction>;
}

const DOCUMENT_ID = "openapi.json";

/** `#/components/…` inside an operation's schema, made absolute so Ajv resolves it in the document. */
function absoluteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(absoluteRefs);
  if (!node || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === "$ref" && typeof value === "string" && value.startsWith("#/") ? `${DOCUMENT_ID}${value}` : absoluteRefs(value),
    ]),
  );
}

let validator: Promise<Validator> | undefined;
let checked = 0;

/** How many responses were checked so far in this test file (to show that a route of calls is checked). */
export const checkedResponses = (): number => checked;

async function loadValidator(): Promise<Validator> {
  const document = (await generateOpenApi()) as unknown as Document;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: document.components.schemas } });
  const routes = Object.entries(document.paths)
    .map(([template, item]) => ({
      template,
      item,
      parameters: (template.match(/\{/g) ?? []).length,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}$`),
    }))
    // A literal path wins over a templated one (`/payments/quote` over `/payments/{payment_id}`).
    .sort((a, b) => a.parameters - b.parameters);
  return { document, routes, ajv, compiled: new Map() };
}

function compile(state: Validator, key: string, schema: unknown): ValidateFunction {
  let validate = state.compiled.get(key);
  if (!validate) {
    validate = state.ajv.compile(absoluteRefs(schema) as object);
    state.compiled.set(key, validate);
  }
  return validate;
}

function resolveHeader(state: Validator, header: HeaderObject): HeaderObject {
  return header.$ref ? (state.document.components.headers?.[header.$ref.replace("#/components/headers/", "")] ?? {}) : header;
}

/**
 * The body as text. A response from `gateway.fetch` in the process still has its `content-encoding`; one
 * through `fetch` over HTTP was decoded on the way (the header stays): decode only what is still encoded.
 */
function decodedText(bytes: Uint8Array<ArrayBuffer>, encoding: string | null): string {
  if (encoding === "gzip" && bytes[0] === 0x1f && bytes[1] === 0x8b) return new TextDecoder().decode(Bun.gunzipSync(bytes));
  if (encoding === "br") {
    try {
      return new TextDecoder().decode(brotliDecompressSync(bytes));
    } catch {
      // already decoded by fetch
    }
  }
  return new TextDecoder().decode(bytes);
}

/** Thrown when a response does not match the document. */
export class UndocumentedResponseError extends Error {
  override name = "UndocumentedResponseError";
}

/**
 * Checks `response` (to `method` `url`) against the document; throws {@link UndocumentedResponseError}
 * listing every mismatch. Reads a clone: the caller's response is left unread.
 */
export async function validateGatewayResponse(method: string, url: string, response: Response): Promise<void> {
  const state = await (validator ??= loadValidator());
  const path = new URL(url).pathname;
  const route = state.routes.find((candidate) => candidate.pattern.test(path));
  const operation = route?.item[method.toLowerCase()];
  if (!route || !operation) return;
  checked += 1;
  const where = `${method.toUpperCase()} ${path} (${route.template}) → ${response.status}`;
  const documented = operation.responses[String(response.status)] ?? operation.responses[`${String(response.status)[0]}XX`] ?? operation.responses.default;
  if (!documented) throw new UndocumentedResponseError(`${where}: status not documented (documented: ${Object.keys(operation.responses).join(", ")})`);

  const problems: string[] = [];
  const declared = documented.headers ?? {};
  for (const [name, value] of response.headers) {
    const header = declared[name] ?? Object.entries(declared).find(([key]) => key.toLowerCase() === name)?.[1];
    if (!header) {
      if (!isTransportHeader(name)) problems.push(`header ${name} not declared`);
      continue;
    }
    const schema = resolveHeader(state, header).schema;
    if (schema) {
      const validate = compile(state, `header:${name}:${JSON.stringify(schema)}`, schema);
      if (!validate(value)) problems.push(`header ${name}: ${JSON.stringify(value)} ${state.ajv.errorsText(validate.errors)}`);
    }
  }
  for (const [name, header] of Object.entries(declared))
    if (resolveHeader(state, header).required && !response.headers.has(name)) problems.push(`required header ${name} missing`);

  const text = decodedText(new Uint8Array(await response.clone().arrayBuffer()), response.headers.get("content-encoding"));
  const contentType = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (text.length > 0 || contentType) {
    const media = contentType ? documented.content?.[contentType] : undefined;
    if (!media)
      problems.push(`content type ${contentType ?? "(none)"} not documented (documented: ${Object.keys(documented.content ?? {}).join(", ") || "no body"})`);
    else if (media.schema && contentType === "application/json") {
      const validate = compile(state, `body:${route.template}:${method}:${response.status}:${contentType}`, media.schema);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        problems.push("body is not JSON");
      }
      if (body !== undefined && !validate(body))
        problems.push(`body does not match its schema: ${state.ajv.errorsText(validate.errors, { separator: "; " })} — body: ${text.slice(0, 500)}`);
    }
  }
  if (problems.length > 0) throw new UndocumentedResponseError(`${where} does not match the OpenAPI document:\n- ${problems.join("\n- ")}`);
}

interface DeliveryOperation {
  parameters: { name: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody: { content: Record<string, { schema: unknown }> };
}

/**
 * Checks one webhook delivery (its headers, lower-case, and raw body) against the document's `webhooks`
 * section: the event type must be there, every header it lists present and matching, the body its
 * envelope. Answers the problems found (none: `[]`).
 */
export async function webhookDeliveryProblems(headers: Record<string, string>, body: string): Promise<string[]> {
  const state = await (validator ??= loadValidator());
  let envelope: { type?: unknown };
  try {
    envelope = JSON.parse(body) as { type?: unknown };
  } catch {
    return ["the delivery's body is not JSON"];
  }
  const type = String(envelope.type);
  const operation = (state.document as unknown as { webhooks?: Record<string, { post: DeliveryOperation }> }).webhooks?.[type]?.post;
  if (!operation) return [`event type ${type} is not in the document's webhooks section`];
  checked += 1;
  const problems: string[] = [];
  if (headers["content-type"]?.split(";")[0] !== "application/json") problems.push(`${type}: content-type ${headers["content-type"]}`);
  for (const parameter of operation.parameters) {
    const value = headers[parameter.name];
    if (value === undefined) {
      if (parameter.required) problems.push(`${type}: header ${parameter.name} missing`);
      continue;
    }
    const validate = parameter.schema && compile(state, `header:${parameter.name}:${JSON.stringify(parameter.schema)}`, parameter.schema);
    if (validate && !validate(value)) problems.push(`${type}: header ${parameter.name}: ${state.ajv.errorsText(validate.errors)}`);
  }
  const validate = compile(state, `webhook:${type}`, operation.requestBody.content["application/json"]!.schema);
  if (!validate(envelope))
    problems.push(`${type}: body does not match its schema: ${state.ajv.errorsText(validate.errors, { separator: "; " })} — body: ${body.slice(0, 500)}`);
  return problems;
}

/** Gateway origins (`http://127.0.0.1:port`) whose responses `fetch` checks. */
const watchedOrigins = new Set<string>();

/** Checks every later `fetch` response from `url`'s origin (a gateway a test started listening). */
export function watchGatewayOrigin(url: string): void {
  installFetchValidation();
  watchedOrigins.add(new URL(url).origin);
}

/** Stops checking `url`'s origin (its gateway stopped; the port may be reused by something else). */
export function unwatchGatewayOrigin(url: string): void {
  watchedOrigins.delete(new URL(url).origin);
}

let installed = false;

/** Wraps the global `fetch` once so responses from watched gateway origins are checked. */
function installFetchValidation(): void {
  if (installed) return;
  installed = true;
  const original = globalThis.fetch;
  const checked = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await original(input, init);
    // A followed redirect (`GET /` from a browser → /dashboard) is checked where it ended.
    const url = response.redirected ? response.url : input instanceof Request ? input.url : String(input);
    if (watchedOrigins.size > 0 && URL.canParse(url) && watchedOrigins.has(new URL(url).origin)) {
      const method = init?.method ?? (input instanceof Request ? input.method : "GET");
      await validateGatewayResponse(method, url, response);
    }
    return response;
  };
  globalThis.fetch = Object.assign(checked, { preconnect: original.preconnect }) as typeof fetch;
}
