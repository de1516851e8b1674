/**
 * The fan-out scenario's reference (issue 8): a plain `fetch` loop, in its own process, POSTing the
 * same number of webhook-sized JSON bodies to the same receiver with as many requests in flight as the
 * gateway's delivery workers have (20 by default). No database, no queue, no signing: what the machine
 * can do at all for this traffic shape.
 *
 *   bun bench/load/fetch-loop.ts '<json FetchLoopInput>'   → prints one FetchLoopOutput as JSON
 */

export interface FetchLoopInput {
  /** Full URL, path included. */
  url: string;
  total: number;
  concurrency: number;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

export interface FetchLoopOutput {
  requests: number;
  errors: number;
  durationMs: number;
  /** Every request's latency in ms, sorted. */
  latenciesMs: number[];
}

if (import.meta.main) {
  const input = JSON.parse(process.argv[2] ?? "{}") as FetchLoopInput;
  let next = 0;
  let errors = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const worker = async () => {
    while (next < input.total) {
      next++;
      const sent = performance.now();
      try {
        const response = await fetch(input.url, { method: "POST", headers: input.headers, body: input.body, signal: AbortSignal.timeout(input.timeoutMs) });
        await response.arrayBuffer();
        if (response.status < 200 || response.status > 299) errors++;
        else latencies.push(performance.now() - sent);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: input.concurrency }, worker));
  const output: FetchLoopOutput = { requests: latencies.length, errors, durationMs: performance.now() - started, latenciesMs: latencies.sort((a, b) => a - b) };
  process.stdout.write(JSON.stringify(output));
}
