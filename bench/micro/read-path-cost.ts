/**
 * The read rows' cost inside the gateway's `fetch`, without HTTP: a gateway on the embedded drivers (or
 * DATABASE_URL/REDIS_URL) with provider A's simulator, set up as `bun run bench` sets it up (a tenant from
 * `POST /tenants`, a token from `POST /auth/token`, one direct payment waited for until approved), then
 * each read row called N times one after the other: µs of CPU per request. A measurement, not a test.
 *
 * ```sh
 * bun bench/micro/read-path-cost.ts            # N = 20 000 per row
 * bun bench/micro/read-path-cost.ts 50000
 * bun bench/micro/read-path-cost.ts 70000 status 7   # one row, in 7 blocks
 * ```
 */
import { DIRECT_PAYMENT } from "../scenarios.ts";
import { startProviderARig } from "../../test/support/provider-a-rig.ts";

const N = Number(process.argv[2] ?? 20_000);
/** Only the rows whose name contains this (all by default). */
const only = process.argv[3];
/** Blocks the requests are measured in (`least` and `median` of their µs CPU/request). */
const BLOCKS = Number(process.argv[4] ?? 7);

const rig = await startProviderARig({
  approveDelayMs: 50,
  env: { LOG_LEVEL: "warn", RATE_LIMIT_RPS: "1000000", RATE_LIMIT_BURST: "1000000" },
});
try {
  const { tg } = rig;
  const fetch = tg.gateway.fetch;
  const call = async (method: string, path: string, token: string | undefined, body?: unknown) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(new Request(`http://localhost${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  };
  const admin = await tg.adminToken();
  const created = (await call("POST", "/tenants", admin, { name: "Micro", storeName: "Micro store" })) as { apiKey: { id: string; secret: string } };
  const token = (await call("POST", "/auth/token", undefined, {
    grant_type: "client_credentials",
    client_id: created.apiKey.id,
    client_secret: created.apiKey.secret,
  })) as { access_token: string };
  const paid = (await call("POST", "/providerA/direct-payment", token.access_token, DIRECT_PAYMENT)) as { transactionId: number };
  for (let i = 0; i < 200; i++) {
    const status = await call("GET", `/providerA/transaction/${paid.transactionId}/status`, token.access_token);
    if (status.status === "approved") break;
    await Bun.sleep(50);
  }

  const rows: [string, string, string][] = [
    ["GET /auth/whoami", "/auth/whoami", admin],
    ["GET …/is-approved (final)", `/providerA/transaction/${paid.transactionId}/is-approved`, token.access_token],
    ["GET …/status (final)", `/providerA/transaction/${paid.transactionId}/status`, token.access_token],
  ];
  for (const [name, path, bearer] of rows.filter(([name]) => !only || name.includes(only))) {
    const headers = { authorization: `Bearer ${bearer}`, host: "localhost:3000", "user-agent": "wrk", accept: "*/*" };
    const one = async () => {
      const response = await fetch(new Request(`http://localhost:3000${path}`, { headers }));
      if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
      await response.arrayBuffer();
    };
    for (let i = 0; i < 2000; i++) await one();
    // Blocks of N / BLOCKS requests: the least CPU per request of the blocks, and their median (the least is the
    // figure that other processes on the machine disturb least: they can only add to it).
    const perBlock: number[] = [];
    const size = Math.ceil(N / BLOCKS);
    let wallTotal = 0;
    for (let block = 0; block < BLOCKS; block++) {
      Bun.gc(true);
      const cpu = process.cpuUsage();
      const start = performance.now();
      for (let i = 0; i < size; i++) await one();
      const used = process.cpuUsage(cpu);
      wallTotal += performance.now() - start;
      perBlock.push((used.user + used.system) / size);
    }
    perBlock.sort((a, b) => a - b);
    const wall = (wallTotal * 1000) / (size * BLOCKS);
    console.log(
      `${name.padEnd(28)} ${perBlock[0]!.toFixed(1).padStart(6)} µs CPU/request least, ${perBlock[Math.floor(BLOCKS / 2)]!.toFixed(1)} median of ${BLOCKS} blocks, ${wall.toFixed(1)} µs wall`,
    );
  }
} finally {
  await rig.close();
}
