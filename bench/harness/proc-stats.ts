/**
 * What the kernel says about a process and the machine, read from `/proc` (Linux only; elsewhere every
 * reading is null): resident memory, CPU time, and how busy the whole machine is.
 */
import { readFileSync } from "node:fs";

/** Clock ticks per second of `/proc` CPU times; 100 on every x86-64 and arm64 Linux build. */
const CLOCK_TICKS = 100;

function readProc(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** VmRSS of `pid` in MiB, or null when it cannot be read. */
export function readRssMb(pid: number): number | null {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readProc(`/proc/${pid}/status`) ?? "");
  return match ? Number(match[1]) / 1024 : null;
}

/** User + system CPU seconds used so far by `pid`, or null. */
export function readCpuSeconds(pid: number): number | null {
  const text = readProc(`/proc/${pid}/stat`);
  if (!text) return null;
  // Fields after the command name, which is in parentheses and may hold spaces: state is [0], utime [11], stime [12].
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Busy and total jiffies of all CPUs together. */
export function readMachineJiffies(): { busy: number; total: number } | null {
  const line = readProc("/proc/stat")?.split("\n")[0];
  if (!line?.startsWith("cpu ")) return null;
  const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  const idle = values[3]! + values[4]!; // idle + iowait
  return { busy: total - idle, total };
}

/**
 * How many cores' worth of CPU the whole machine used during `ms`, and how much of it was `pid`.
 * Taken while the bench itself is idle, it shows other work that would skew the results.
 */
export async function measureBackgroundCpu(pid: number, ms = 1_000): Promise<{ machineCores: number; processCores: number } | null> {
  const before = readMachineJiffies();
  const processBefore = readCpuSeconds(pid);
  const started = performance.now();
  await Bun.sleep(ms);
  const after = readMachineJiffies();
  const processAfter = readCpuSeconds(pid);
  const seconds = (performance.now() - started) / 1000;
  if (!before || !after || processBefore === null || processAfter === null) return null;
  const cores = navigator.hardwareConcurrency;
  const machineCores = ((after.busy - before.busy) / Math.max(1, after.total - before.total)) * cores;
  return { machineCores, processCores: (processAfter - processBefore) / seconds };
}

/** Watches `pid` while a load runs: RSS sampled every `everyMs`, CPU time from start to stop. */
export function watchProcess(pid: number, everyMs = 200): { stop(): { maxRssMb: number | null; cpuSeconds: number | null } } {
  let max: number | null = readRssMb(pid);
  const cpuBefore = readCpuSeconds(pid);
  const sample = () => {
    const rss = readRssMb(pid);
    if (rss !== null && (max === null || rss > max)) max = rss;
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const cpuAfter = readCpuSeconds(pid);
      return { maxRssMb: max, cpuSeconds: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore };
    },
  };
}

/**
 * CPU used by several processes and by the whole machine between `start` and `stop`, in cores: what else
 * was busy while a row was measured (the simulators, PostgreSQL and Redis, the load generator).
 */
export function watchCpu(pids: Record<string, number>): { stop(): { processes: Record<string, number | null>; machineCores: number | null } } {
  const started = performance.now();
  const machineBefore = readMachineJiffies();
  const before = Object.fromEntries(Object.entries(pids).map(([label, pid]) => [label, readCpuSeconds(pid)]));
  return {
    stop() {
      const seconds = (performance.now() - started) / 1000;
      const machineAfter = readMachineJiffies();
      const processes: Record<string, number | null> = {};
      for (const [label, pid] of Object.entries(pids)) {
        const after = readCpuSeconds(pid);
        const then = before[label];
        processes[label] = after === null || then === null || then === undefined ? null : (after - then) / seconds;
      }
      const machineCores =
        machineBefore && machineAfter
          ? ((machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total)) * navigator.hardwareConcurrency
          : null;
      return { processes, machineCores };
    },
  };
}

/**
 * Waits until every process in `pids` has used less than `thresholdCores` for `windows` windows of
 * `windowMs` in a row (the work a scenario left behind — webhooks, sync jobs, deliveries — is done), or
 * `maxMs` passed. Resolves with the milliseconds waited and whether it got quiet.
 */
export async function waitForQuiet(
  pids: number[],
  options: { maxMs: number; thresholdCores?: number; windowMs?: number; windows?: number },
): Promise<{ waitedMs: number; quiet: boolean }> {
  const threshold = options.thresholdCores ?? 0.1;
  const windowMs = options.windowMs ?? 250;
  const needed = options.windows ?? 2;
  const started = performance.now();
  let calm = 0;
  while (performance.now() - started < options.maxMs) {
    const before = pids.map(readCpuSeconds);
    const t0 = performance.now();
    await Bun.sleep(windowMs);
    const seconds = (performance.now() - t0) / 1000;
    const busy = pids.some((pid, i) => {
      const after = readCpuSeconds(pid);
      const then = before[i];
      return after !== null && then !== null && then !== undefined && (after - then) / seconds >= threshold;
    });
    calm = busy ? 0 : calm + 1;
    if (calm >= needed) return { waitedMs: performance.now() - started, quiet: true };
  }
  return { waitedMs: performance.now() - started, quiet: false };
}
