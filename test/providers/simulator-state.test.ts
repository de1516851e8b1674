/**
 * The simulators' state files (issue 25, `src/providers/simulator-state.ts`): a simulator made again on the
 * same folder knows what the last one knew; one whose run was killed (never closed) hands out provider A ids
 * far ahead rather than again; a payment waiting for its sandbox approval when the simulator stopped is
 * approved after the restart; and a second simulator on a file that a live process holds runs in memory.
 */
import { afterEach, describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simulatorsKeepingState } from "../../src/providers/simulators.ts";
import { waitUntil } from "../support/wait.ts";

type Body = Record<string, any>;

const quiet = { busy: () => {}, writeFailed: () => {} };

/** The state file's content, or undefined before its first write. */
function stateFileOf(dir: string): Body | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, "providerA.json"), "utf8")) as Body;
  } catch {
    return undefined;
  }
}

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "passerelle-sim-state-"));
  folders.push(dir);
  return dir;
}

type Simulator = { handle(request: Request): Promise<Response>; close(): void };

async function json(simulator: Simulator, method: string, path: string, body?: unknown, secretKey?: string): Promise<{ status: number; body: Body }> {
  const response = await simulator.handle(
    new Request(`http://localhost${path}`, {
      method,
      headers: { "content-type": "application/json", ...(secretKey && { authorization: `Bearer ${secretKey}` }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    }),
  );
  return { status: response.status, body: (await response.json()) as Body };
}

const transaction = (amount: number) => ({ description: "Order", amount, currency: { iso: "XOF" } });

/** Creates a transaction and sends its push (so the sandbox plays its outcome); answers its id. */
async function pushedTransaction(simulator: Simulator, secretKey: string, amount: number): Promise<number> {
  const created = await json(simulator, "POST", "/v1/transactions", transaction(amount), secretKey);
  const id = created.body["v1/transaction"].id as number;
  const { token } = (await json(simulator, "POST", `/v1/transactions/${id}/token`, undefined, secretKey)).body;
  const pushed = await json(simulator, "POST", "/v1/mtn_open", { token, phone_number: { number: "+22997000000", country: "bj" } }, secretKey);
  expect(pushed.status).toBe(200);
  return id;
}

describe("simulators keeping state under a folder", () => {
  it("a provider A simulator made again knows the accounts, transactions and ids of the last one", async () => {
    const simulators = simulatorsKeepingState(folder(), quiet);
    const first = simulators.createSimulatorApp("providerA") as unknown as Simulator;
    const { secretKey } = (await json(first, "POST", "/_sim/accounts", { environment: "sandbox" })).body;
    const made = await json(first, "POST", "/v1/transactions", transaction(500), secretKey);
    first.close();

    const second = simulators.createSimulatorApp("providerA") as unknown as Simulator;
    const read = await json(second, "GET", `/v1/transactions/${made.body["v1/transaction"].id}`, undefined, secretKey);
    expect(read.status).toBe(200);
    expect(read.body["v1/transaction"].amount).toBe(500);
    const next = await json(second, "POST", "/v1/transactions", transaction(600), secretKey);
    expect(next.body["v1/transaction"].id).toBe(made.body["v1/transaction"].id + 1);
    second.close();
  });

  it("after a run that was killed (never closed), provider A ids jump ahead instead of repeating", async () => {
    const dir = folder();
    const first = simulatorsKeepingState(dir, quiet).createSimulatorApp("providerA") as unknown as Simulator;
    const { secretKey } = (await json(first, "POST", "/_sim/accounts", { environment: "sandbox" })).body;
    const made = await json(first, "POST", "/v1/transactions", transaction(500), secretKey);
    await waitUntil(() => stateFileOf(dir)?.state.ledger.transactions.length === 1, {
      what: "the transaction written to the state file",
    });
    // A killed process closes nothing; its lock file names a process that no longer runs.
    await Bun.write(join(dir, "providerA.json.lock"), "999999");

    const second = simulatorsKeepingState(dir, quiet).createSimulatorApp("providerA") as unknown as Simulator;
    const next = await json(second, "POST", "/v1/transactions", transaction(600), secretKey);
    expect(next.status).toBe(200);
    expect(next.body["v1/transaction"].id).toBeGreaterThan(made.body["v1/transaction"].id + 1000);
    second.close();
  });

  it("a payment waiting for its sandbox approval when the simulator stopped is approved after the restart", async () => {
    const simulators = simulatorsKeepingState(folder(), quiet);
    const first = simulators.createSimulatorApp("providerA", { approveDelayMs: 60_000 }) as unknown as Simulator;
    const { secretKey } = (await json(first, "POST", "/_sim/accounts", { environment: "sandbox" })).body;
    const id = await pushedTransaction(first, secretKey, 500);
    first.close();

    const second = simulators.createSimulatorApp("providerA", { approveDelayMs: 20 }) as unknown as Simulator;
    const approved = await waitUntil(
      async () => {
        const read = await json(second, "GET", `/v1/transactions/${id}`, undefined, secretKey);
        return read.body["v1/transaction"].status === "approved" ? read.body : undefined;
      },
      { what: "the transaction approved after the restart" },
    );
    expect(approved["v1/transaction"].id).toBe(id);
    second.close();
  });

  it("a provider B simulator made again accepts the keys of an account made on the last one, with its balances", async () => {
    const simulators = simulatorsKeepingState(folder(), quiet);
    const first = simulators.createSimulatorApp("providerB") as unknown as Simulator;
    const keys = (await json(first, "POST", "/_sim/accounts")).body;
    const set = await json(first, "PUT", `/_sim/accounts/${keys.masterKey}/balances`, { SN: 12_345 });
    expect(set.status).toBe(200);
    first.close();

    const second = simulators.createSimulatorApp("providerB") as unknown as Simulator;
    const balances = await json(second, "GET", `/_sim/accounts/${keys.masterKey}/balances`);
    expect(balances.status).toBe(200);
    expect(JSON.stringify(balances.body)).toContain("12345");
    second.close();
  });

  it("a second simulator on a file a live process holds runs in memory and says so", async () => {
    const busy: string[] = [];
    const simulators = simulatorsKeepingState(folder(), { ...quiet, busy: (path) => busy.push(path) });
    const holder = simulators.createSimulatorApp("providerA") as unknown as Simulator;
    const other = simulators.createSimulatorApp("providerA") as unknown as Simulator;
    expect(busy).toEqual([expect.stringMatching(/providerA\.json$/)]);
    const { secretKey } = (await json(other, "POST", "/_sim/accounts", { environment: "sandbox" })).body;
    other.close();
    holder.close();
    // The holder's file never saw the other's account.
    const again = simulators.createSimulatorApp("providerA") as unknown as Simulator;
    expect((await json(again, "GET", "/v1/transactions/1", undefined, secretKey)).status).toBe(401);
    again.close();
  });
});
