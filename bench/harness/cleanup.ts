/**
 * Undo steps run in reverse order exactly once: at the end of the run, on an error, and on Ctrl-C or
 * SIGTERM — so no child process, scratch database or Redis key outlives the bench.
 */

export interface Cleanup {
  /** Registers an undo step; the last registered runs first. */
  add(label: string, undo: () => Promise<void> | void): void;
  /** Runs every step (each failure is reported, not thrown). Safe to call more than once. */
  run(): Promise<void>;
  /** True once SIGINT or SIGTERM arrived: the run should stop where it is. */
  readonly interrupted: boolean;
}

/** Thrown by a run that notices it was interrupted; the signal handler reports and exits. */
export class Interrupted extends Error {
  override name = "Interrupted";
}

/**
 * Creates the cleanup stack and hooks SIGINT/SIGTERM: the first signal runs the stack then exits
 * with 130/143; a second signal exits at once.
 */
export function createCleanup(log: (line: string) => void): Cleanup {
  const steps: { label: string; undo: () => Promise<void> | void }[] = [];
  let running: Promise<void> | undefined;

  let signalled = false;
  const cleanup: Cleanup = {
    get interrupted() {
      return signalled;
    },
    add(label, undo) {
      steps.push({ label, undo });
    },
    run() {
      running ??= (async () => {
        while (steps.length > 0) {
          const step = steps.pop()!;
          try {
            await step.undo();
          } catch (error) {
            log(`cleanup: ${step.label} failed: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
      })();
      return running;
    },
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(1);
    signalled = true;
    log(`bench: ${signal}, cleaning up…`);
    void cleanup.run().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return cleanup;
}
