/**
 * README.md's "A first tenant: sign-up, a payment, a refund and a payout", run as written: its ```sh blocks are read from the README
 * (so the test breaks when the README drifts), joined into one bash script that shares its variables, and
 * run against the quick start's gateway — `bun src/main.ts serve` on the development defaults (PGlite,
 * in-process jobs, simulators on) with a fresh DATA_DIR, on a free port that replaces `localhost:3000`.
 * DATABASE_URL and REDIS_URL are not passed on: the quick start is the embedded drivers. The same gateway
 * runs `bun run demo`, whose printed follow-up lines are pasted into bash as a reader would.
 */
import { afterAll, beforeAll, expect, it } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onServerPass, describeOnEmbeddedPass } from "../../support/passes.ts";
import { freePort } from "../../support/ports.ts";
import { cleanEnv, waitReady } from "../../support/spawned-gateway.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");
const HEADING = "## A first tenant: sign-up, a payment, a refund and a payout";
const QUICK_START_ADDRESS = "localhost:3000";

/** The ```sh blocks of the README's section under `heading`, up to the next `## ` heading. */
function shellBlocksUnder(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README.md has no '${heading}' section`);
  const rest = readme.slice(start + heading.length + 2);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

const OPERATORS_HEADING = "## Every operator in the sandbox: a Wave payment (a page) and an Orange Money payment (a code)";
const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const blocks = shellBlocksUnder(readme, HEADING);
/** The next section goes on in the same shell: its blocks run after the first section's. */
const operatorBlocks = shellBlocksUnder(readme, OPERATORS_HEADING);
let dataDir: string;
let port: number;
let server: ReturnType<typeof Bun.spawn> | undefined;

beforeAll(async () => {
  if (onServerPass) return;
  dataDir = mkdtempSync(join(tmpdir(), "passerelle-readme-"));
  port = await freePort();
  // The quick start's `bun run start`; only the port, the data folder and the metrics port (0: any free one) differ.
  server = Bun.spawn(["bun", "src/main.ts", "serve"], {
    cwd: ROOT,
    env: cleanEnv({ PORT: String(port), DATA_DIR: dataDir, METRICS_PORT: "0" }),
    stdout: "ignore",
    stderr: "ignore",
  });
  await waitReady(port);
}, 40_000);

afterAll(async () => {
  if (onServerPass) return;
  server?.kill();
  await server?.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs the blocks as one bash script; each block's output is told apart by a marker line before it. */
/** Runs `script` (the commands as a reader pastes them) with bash; `stdout` split at each `marker` line. */
async function runBash(script: string, env: Record<string, string>, marker?: string) {
  const child = Bun.spawn(["bash", "-c", script], { cwd: ROOT, env: cleanEnv(env), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  const outputs = marker
    ? stdout
        .split(`\n${marker}\n`)
        .slice(1)
        .map((output) => output.trim())
    : [stdout];
  return { outputs, stderr, code };
}

async function runWalkthrough(): Promise<{ outputs: string[]; stderr: string; code: number }> {
  const marker = "@@ readme block @@";
  const script = [
    "set -eo pipefail",
    ...[...blocks, ...operatorBlocks].map((block) => `printf '\\n%s\\n' '${marker}'\n${block.replaceAll(QUICK_START_ADDRESS, `localhost:${port}`)}`),
  ].join("\n");
  return runBash(script, { DATA_DIR: dataDir }, marker);
}

describeOnEmbeddedPass(`README.md: ${HEADING.slice(3)}`, () => {
  it("is eight ```sh blocks (and four in the next section) that talk to the quick start's address", () => {
    expect(blocks).toHaveLength(8);
    expect(operatorBlocks).toHaveLength(4);
    for (const block of [...blocks, ...operatorBlocks]) expect(block).toContain(QUICK_START_ADDRESS);
  });

  it("runs as written against the quick start: a tenant, its token, its masked provider B keys, whoami, a payment, a refund, a payout, the balance", async () => {
    const { outputs, stderr, code } = await runWalkthrough();
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(outputs).toHaveLength(12);
    const [created, token, credentials, whoami, paid, refund, payout, balance, wave, wavePaid, orange, link] = outputs as string[] as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];

    // 1. the tenant, its first sandbox API key and its callback secret
    type Created = { tenant: { id: string; name: string }; apiKey: { id: string; secret: string }; callbackSecret: string };
    const tenant = JSON.parse(created) as Created;
    expect(tenant.tenant.id).toMatch(/^ten_/);
    expect(tenant.tenant.name).toBe("Boutique Dakar");
    expect(tenant.apiKey.id).toMatch(/^key_/);
    expect(tenant.apiKey.secret).toMatch(/^psk_sandbox_/);
    expect(tenant.callbackSecret).toMatch(/^whsec_/);

    // 2. the bearer token, a JWT for that key
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { tenant_id: string; key_id: string };
    expect(claims).toMatchObject({ tenant_id: tenant.tenant.id, key_id: tenant.apiKey.id });

    // 3. provider B credentials stored, shown masked (the last four characters after an ellipsis)
    const stored = JSON.parse(credentials) as Record<string, unknown>;
    expect(stored).toMatchObject({ environment: "sandbox", version: 1 });
    for (const name of ["masterKey", "privateKey", "publicKey", "token"]) expect(stored[name]).toMatch(/^….{4}$/);

    // 4. whoami names the tenant and its key
    const expected = { role: "tenant", tenantId: tenant.tenant.id, keyId: tenant.apiKey.id, environment: "sandbox" };
    expect(JSON.parse(whoami)).toMatchObject(expected);

    // 5–8. a payment, 300 of it refunded to the phone that paid, 200 paid out, and what is left
    expect(paid).toMatch(/^pay_\w+ succeeded$/);
    const paymentId = paid.split(" ")[0];
    expect(JSON.parse(refund)).toMatchObject({
      paymentId,
      state: "succeeded",
      amount: 300,
      provider: "providerA",
      recipient: { phone: { number: "+22997000000" } },
    });
    expect(JSON.parse(payout)).toMatchObject({ state: "sent", amount: 200, provider: "providerA", recipient: { operator: "mtn" } });
    expect(JSON.parse(balance)).toMatchObject({ environment: "sandbox", balances: [{ currency: "XOF", available: 300, pending: 0 }] });

    // 9–11. a Wave payment's page, paid on the simulator; an Orange Money payment with its code
    expect(wave).toMatch(new RegExp(`^http://localhost:${port}/sandbox/providerB/softpay/pay/\\S+$`));
    expect(wavePaid).toMatch(/^pay_\w+ succeeded$/);
    expect(orange.split("\n")).toEqual([expect.stringContaining("#144*82#"), "providerB"]);

    // 12. it ends with a payment link: its WhatsApp share URL, then the link, whose pay page answers
    const [whatsapp, url] = link.split("\n") as [string, string];
    expect(whatsapp).toStartWith("https://wa.me/?text=");
    expect(url).toMatch(new RegExp(`^http://localhost:${port}/pay/pl_[0-9A-Z]{16}$`));
    expect(decodeURIComponent(whatsapp)).toContain(url);
    expect((await fetch(url)).status).toBe(200);
  }, 60_000);
});

describeOnEmbeddedPass("bun run demo", () => {
  it("ends with the demo tenant's id and token, and follow-up curl lines that answer when pasted", async () => {
    const env = cleanEnv({ PORT: String(port), DATA_DIR: dataDir });
    const demo = Bun.spawn(["bun", "run", "demo"], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(demo.stdout).text(), new Response(demo.stderr).text(), demo.exited]);
    expect({ code, stderr: stderr.replace(/^\$ .*\n/m, "") }).toEqual({ code: 0, stderr: "" });
    const lines = stdout.trimEnd().split("\n");
    // Money out: a refund of part of the direct payment and a payout, both sent by provider A's sandbox.
    expect(stdout).toMatch(/Refund rf_\w+ of 200 FCFA to the phone that paid is succeeded;/);
    expect(stdout).toMatch(/payout po_\w+ of 200 FCFA to \+22996000001 is sent;/);
    expect(stdout).toContain("the balance now: 100 XOF available, 0 pending.");
    // A failover: provider B refuses, provider A takes the same payment, and the attempts say so.
    expect(stdout).toMatch(/5\. Payment pay_\w+ to an MTN Benin phone, provider B first \(told to refuse\), taken by providerA:/);
    expect(stdout).toMatch(/attempt 1: providerB refused — first of the route list/);
    expect(stdout).toMatch(/attempt 2: providerA started — next in the route list/);
    expect(stdout).toMatch(/it is succeeded; provider B's refusal counts/);
    const first = lines.findIndex((line) => line.startsWith("export TENANT="));
    expect(first).toBeGreaterThan(0);
    const pasted = lines.slice(first);
    expect(pasted[0]).toMatch(/^export TENANT=ten_\w+$/);
    expect(pasted[1]).toMatch(/^export TOKEN=[\w-]+\.[\w-]+\.[\w-]+$/);
    // The follow-up calls, then the demo's last step: a payment link, its URL the last line.
    const calls = pasted.slice(2, pasted.indexOf(""));
    expect(lines.at(-1)).toMatch(new RegExp(`^\\s*http://localhost:${port}/pay/pl_[0-9A-Z]{16}$`));
    expect(stdout).toMatch(/6\. Payment link pl_\w+: open it on a phone/);
    expect(calls.length).toBeGreaterThanOrEqual(3);
    for (const call of calls) expect(call).toStartWith(`curl -s http://localhost:${port}/`);

    const marker = "@@ demo follow-up @@";
    const script = [pasted[0], pasted[1], ...calls.map((call) => `printf '\\n%s\\n' '${marker}'\n${call}`)].join("\n");
    const run = await runBash(script, {}, marker);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const tenantId = pasted[0]!.slice("export TENANT=".length);
    const answers = run.outputs.map((output) => JSON.parse(output) as Record<string, unknown>);
    for (const answer of answers) expect(answer.statusCode).toBeUndefined();
    const whoami = answers[calls.findIndex((call) => call.includes("/auth/whoami"))];
    expect(whoami).toMatchObject({ role: "tenant", tenantId });
    const payments = answers.filter((answer) => typeof answer.id === "string" && answer.id.startsWith("pay_"));
    expect(payments.map((payment) => payment.provider).sort()).toEqual(["providerA", "providerB"]);
  }, 60_000);
});
