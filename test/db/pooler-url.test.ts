// DATABASE_URL's `?pgbouncer=true` (docs/fleet.md): ours to read, never sent to the server.
import { describe, expect, it } from "bun:test";
import { throughPooler } from "../../src/db/open-postgres.ts";

describe("DATABASE_URL through a pooler", () => {
  it("reads ?pgbouncer=true and takes it off the URL the driver connects to", () => {
    expect(throughPooler("postgres://app@pool:6432/passerelle?pgbouncer=true&sslmode=disable")).toEqual({
      url: "postgres://app@pool:6432/passerelle?sslmode=disable",
      pooler: true,
    });
    expect(throughPooler("postgres://app@pool:6432/passerelle?pgbouncer=false")).toEqual({ url: "postgres://app@pool:6432/passerelle", pooler: false });
  });

  it("leaves a URL without it as it is", () => {
    expect(throughPooler("postgres://postgres@127.0.0.1:5432/postgres")).toEqual({ url: "postgres://postgres@127.0.0.1:5432/postgres", pooler: false });
  });

  it("refuses a value other than true or false", () => {
    expect(() => throughPooler("postgres://app@pool/db?pgbouncer=yes")).toThrow('pgbouncer must be true or false, not "yes"');
  });
});
