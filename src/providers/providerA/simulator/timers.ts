/**
 * The simulator's timers (sandbox outcomes after a delay, webhook retries), kept together so that
 * `close()` can cancel every one of them. They never hold a process open on their own.
 */

export interface Timers {
  /** Runs `task` after `ms`; the returned function cancels it. Does nothing once closed. */
  after(ms: number, task: () => void): () => void;
  /** How many timers are waiting. */
  readonly size: number;
  /** Cancels every waiting timer and refuses new ones. */
  close(): void;
}

/** An empty set of timers; `afterTask` runs after each task that ran (the simulator saves its state there). */
export function createTimers(afterTask: () => void = () => {}): Timers {
  const waiting = new Set<ReturnType<typeof setTimeout>>();
  let closed = false;
  return {
    after(ms, task) {
      if (closed) return () => {};
      const timer = setTimeout(() => {
        waiting.delete(timer);
        try {
          task();
        } finally {
          afterTask();
        }
      }, ms);
      timer.unref?.();
      waiting.add(timer);
      return () => {
        clearTimeout(timer);
        waiting.delete(timer);
      };
    },
    get size() {
      return waiting.size;
    },
    close() {
      closed = true;
      for (const timer of waiting) clearTimeout(timer);
      waiting.clear();
    },
  };
}
