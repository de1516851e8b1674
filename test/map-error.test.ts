import { describe, expect, it } from "bun:test";
import { TRPCError } from "@trpc/server";
import { BASIC_CHALLENGE, type OAuthErrorBody } from "../src/error-body.ts";
import { ConflictError, InvalidTokenError, NotConfiguredError, ProviderError, RateLimitedError, UnauthorizedError, ValidationError } from "../src/errors.ts";
import { mapError, reasonPhrase, trpcCodeOf, trpcErrorShape } from "../src/map-error.ts";

// The one mapping: every surface's status, body, headers and tRPC code come from mapError.
describe("error mapping", () => {
  it("gives each status its reason phrase and tRPC code", () => {
    const table = [400, 401, 403, 404, 405, 409, 413, 415, 422, 424, 429, 500, 502, 503, 504, 418].map((status) => [
      status,
      reasonPhrase(status),
      trpcCodeOf(status),
    ]);
    expect(table).toEqual([
      [400, "Bad Request", "BAD_REQUEST"],
      [401, "Unauthorized", "UNAUTHORIZED"],
      [403, "Forbidden", "FORBIDDEN"],
      [404, "Not Found", "NOT_FOUND"],
      [405, "Method Not Allowed", "METHOD_NOT_SUPPORTED"],
      [409, "Conflict", "CONFLICT"],
      [413, "Payload Too Large", "PAYLOAD_TOO_LARGE"],
      [415, "Unsupported Media Type", "UNSUPPORTED_MEDIA_TYPE"],
      [422, "Unprocessable Entity", "UNPROCESSABLE_CONTENT"],
      [424, "Failed Dependency", "PRECONDITION_FAILED"],
      [429, "Too Many Requests", "TOO_MANY_REQUESTS"],
      [500, "Internal Server Error", "INTERNAL_SERVER_ERROR"],
      [502, "Bad Gateway", "BAD_GATEWAY"],
      [503, "Service Unavailable", "SERVICE_UNAVAILABLE"],
      [504, "Gateway Timeout", "GATEWAY_TIMEOUT"],
      [418, "Error", "INTERNAL_SERVER_ERROR"],
    ]);
  });

  it("maps a domain error to status, body, headers and tRPC code at once", () => {
    expect(mapError(new RateLimitedError(2.2), "req_1")).toEqual({
      status: 429,
      body: { statusCode: 429, message: "Too many requests", error: "Too Many Requests", code: "rate_limited", requestId: "req_1" },
      headers: { "retry-after": "3" },
      trpcCode: "TOO_MANY_REQUESTS",
      unexpected: false,
    });
    expect(mapError(new NotConfiguredError("No provider B credentials"), "req_1").trpcCode).toBe("PRECONDITION_FAILED");
    const refused = mapError(new ProviderError(502, "Provider A failed", { paymentId: "pay_1", transactionId: 7 }), "req_1");
    expect(refused.body).toMatchObject({ statusCode: 502, code: "provider_error", paymentId: "pay_1", transactionId: 7 });
    expect(mapError(new Error("secret detail"), "req_1")).toMatchObject({ status: 500, body: { message: "Internal server error" }, unexpected: true });
  });

  it("challenges a 401 with Bearer, naming invalid_token when a token was refused", () => {
    expect(mapError(new UnauthorizedError(), "r").headers).toEqual({ "www-authenticate": 'Bearer realm="passerelle"' });
    expect(mapError(new InvalidTokenError('Token "expired"'), "r").headers["www-authenticate"]).toBe(
      'Bearer realm="passerelle", error="invalid_token", error_description="Token expired"',
    );
  });

  it("reads what tRPC wraps, and tRPC's own errors", () => {
    expect(mapError(new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: new ConflictError("Taken") }), "r")).toMatchObject({
      status: 409,
      trpcCode: "CONFLICT",
    });
    expect(mapError(new TRPCError({ code: "METHOD_NOT_SUPPORTED", message: "Wrong method" }), "r")).toMatchObject({
      status: 405,
      body: { code: "not_found", error: "Method Not Allowed" },
    });
    expect(mapError(new TRPCError({ code: "NOT_FOUND", message: "No procedure found" }), "r").body.message).toBe("Not found");
    expect(mapError(new TRPCError({ code: "PARSE_ERROR" }), "r").body).toMatchObject({ statusCode: 400, message: "Malformed JSON in request body" });
    expect(mapError(new TRPCError({ code: "TIMEOUT" }), "r")).toMatchObject({ status: 500, unexpected: true });
  });

  it("writes the token endpoint's errors as RFC 6749 §5.2 has them, with the Basic challenge", () => {
    const mapped = mapError(new UnauthorizedError("Invalid client credentials"), "req_1", "oauth");
    expect(mapped.body as OAuthErrorBody).toEqual({
      error: "invalid_client",
      error_description: "Invalid client credentials",
      statusCode: 401,
      message: "Invalid client credentials",
      code: "unauthorized",
      requestId: "req_1",
    });
    expect(mapped.headers).toEqual({ "www-authenticate": BASIC_CHALLENGE });
    expect(mapError(new ValidationError(["scope must be a string", "x is invalid"]), "r", "oauth").body).toMatchObject({
      error: "invalid_request",
      error_description: "scope must be a string; x is invalid",
    });
  });

  it("puts the same body in tRPC's envelope", () => {
    const shape = trpcErrorShape(mapError(new ValidationError(["a must be a string", "b should not be empty"]), "req_1"), "payments.create");
    expect(shape).toEqual({
      code: -32600,
      message: "a must be a string; b should not be empty",
      data: {
        httpStatus: 400,
        code: "BAD_REQUEST",
        path: "payments.create",
        httpBody: {
          statusCode: 400,
          message: ["a must be a string", "b should not be empty"],
          error: "Bad Request",
          code: "validation_failed",
          requestId: "req_1",
        },
      },
    });
  });
  it("answers a database that cannot serve the request with 503 unavailable and Retry-After, whatever the driver or the pooler threw", () => {
    // What postgres.js and PgBouncer were seen throwing while PostgreSQL restarted under a fleet (docs/reliability.md).
    const pgbouncer = (code: string, message: string) => Object.assign(new Error(message), { name: "PostgresError", code, severity: "FATAL" });
    const thrown = [
      pgbouncer("08P01", "server login has been failing, try again later (server_login_retry)"),
      pgbouncer("08P01", "pgbouncer cannot connect to server"),
      pgbouncer("08006", "connection failure"),
      Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:6432"), { code: "CONNECTION_CLOSED" }),
      Object.assign(new Error("write CONNECT_TIMEOUT 127.0.0.1:6432"), { code: "CONNECT_TIMEOUT" }),
      Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      new Error("a job failed", { cause: pgbouncer("08P01", "query_wait_timeout") }),
    ];
    for (const error of thrown) {
      const answer = mapError(error, "req_1");
      expect({ message: error.message, status: answer.status, body: answer.body, headers: answer.headers, unexpected: answer.unexpected }).toEqual({
        message: error.message,
        status: 503,
        body: {
          statusCode: 503,
          message: "The database is unavailable; try again shortly",
          error: "Service Unavailable",
          code: "unavailable",
          requestId: "req_1",
        },
        headers: { "retry-after": "1" },
        unexpected: false,
      });
    }
    // A statement the database refused for what it says (not its connection) stays ours to fix.
    expect(mapError(pgbouncer("42P01", 'relation "nope" does not exist'), "req_1").status).toBe(500);
    expect(mapError(new TypeError("x is not a function"), "req_1").status).toBe(500);
  });
});
