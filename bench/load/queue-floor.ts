/**
 * The webhook fan-out's floor (issue 8): what contract §8 asks of every delivery — one BullMQ job (job id
 * = the delivery's id) — with nothing else. A producer process adds one job per POST from as many loops
 * as the fan-out's producers have adds in flight; a worker process (this script again, `--worker`) runs
 * them with the gateway's delivery concurrency, each job one `fetch` POST of the same body to the same
 * receiver. No database, no lease, no signing. Its rate against the plain fetch loop is what a job per delivery costs on this
 * machine; the gateway's fan-out against it is what the gateway adds on top.
 *
 *   bun bench/load/queue-floor.ts '<json QueueFloorInput>'   → prints one FetchLoopOutput as JSON
 *
 * Rate: jobs done ÷ (last done − first added), wall clock; latency per job: done − added.
 */
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { FetchLoopInput, FetchLoopOutput } from "./fetch-loop.ts";

export interface QueueFloorInput extends FetchLoopInput {
  redisUrl: string;
  /** BullMQ key prefix (the run's, so that cleanup removes it). */
  prefix: string;
  /** Concurrent producer loops. */
  producers: number;
}

const QUEUE = "floor";
const wallNow = () => performance.timeOrigin + performance.now();
const connect = (url: string) => new Redis(url, { maxRetriesPerRequest: null });

/** The worker process: runs `total` jobs, then prints the result and exits. */
async function work(input: QueueFloorInput): Promise<void> {
  const latencies: number[] = [];
  let errors = 0;
  let firstAdded = Infinity;
  let lastDone = 0;
  const connection = connect(input.redisUrl);
  let finish: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const worker = new Worker<{ addedAt: number }>(
    QUEUE,
    async (job) => {
      try {
        const response = await fetch(input.url, { method: "POST", headers: input.headers, body: input.body, signal: AbortSignal.timeout(input.timeoutMs) });
        await response.arrayBuffer();
        if (response.status < 200 || response.status > 299) errors++;
        else {
          const done = wallNow();
          latencies.push(done - job.data.addedAt);
          firstAdded = Math.min(firstAdded, job.data.addedAt);
          lastDone = Math.max(lastDone, done);
        }
      } catch {
        errors++;
      }
      if (latencies.length + errors >= input.total) finish();
    },
    { connection, prefix: input.prefix, concurrency: input.concurrency, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } },
  );
  await worker.waitUntilReady();
  process.stdout.write("ready\n");
  await finished;
  const output: FetchLoopOutput = { requests: latencies.length, errors, durationMs: lastDone - firstAdded, latenciesMs: latencies.sort((a, b) => a - b) };
  process.stdout.write(`${JSON.stringify(output)}\n`);
  await worker.close();
  connection.disconnect();
}

/** The producer process: starts the worker, adds the jobs, returns the worker's result. */
async function produce(input: QueueFloorInput): Promise<void> {
  const child = Bun.spawn([process.execPath, import.meta.path, "--worker", JSON.stringify(input)], { stdout: "pipe", stderr: "inherit" });
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const newline = buffered.indexOf("\n");
      if (newline !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        return line;
      }
      const { value, done } = await lines.read();
      if (done) throw new Error(`the worker exited (${await child.exited}) before answering`);
      buffered += value;
    }
  };
  if ((await nextLine()) !== "ready") throw new Error("the worker did not start");
  const connection = connect(input.redisUrl);
  const queue = new Queue(QUEUE, { connection, prefix: input.prefix });
  let next = 0;
  const loop = async () => {
    while (next < input.total) {
      const n = next++;
      await queue.add("deliver", { addedAt: wallNow() }, { jobId: `dlv_floor_${n}`, removeOnComplete: true, removeOnFail: true });
    }
  };
  await Promise.all(Array.from({ length: input.producers }, loop));
  const result = await nextLine();
  await child.exited;
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
  connection.disconnect();
  process.stdout.write(result);
}

if (import.meta.main) {
  const worker = process.argv[2] === "--worker";
  const input = JSON.parse(process.argv[worker ? 3 : 2] ?? "{}") as QueueFloorInput;
  await (worker ? work(input) : produce(input));
  process.exit(0);
}
