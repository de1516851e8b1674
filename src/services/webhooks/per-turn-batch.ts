/**
 * Gathering concurrent requests into one call (one statement for many deliveries), so that the database
 * and the gateway pay about what one request costs for the whole batch.
 *
 * A batch goes out at the microtask checkpoint of the task in which its first request was made: the
 * requests made in the same task of the event loop go together, and a microtask delays nothing. With
 * `maxInFlight`, at most that many calls run at once per scope; the requests made while the limit is
 * reached wait, and go out together as soon as a call ends (group commit): on an idle system a request
 * still goes out at once, under load the batches grow with the database's latency instead of the number
 * of statements doing so.
 *
 * A request whose id is already in the batch being gathered, or in a call that is running, waits for a
 * later call, so that the result is the same as if every request had run on its own, one after the other.
 */

/** Options of {@link perTurnBatch}. */
export interface BatchOptions {
  /** Calls running at once per scope; the requests made meanwhile wait and go out together. Default: no limit. */
  maxInFlight?: number;
}

/**
 * A function that queues `item` under `scope` and resolves with its result from `run`, which gets a
 * batch of items (ids unique, and none in another running call) and returns one result per item, in
 * order. A call that throws rejects every request of its batch.
 *
 * @example
 * ```ts
 * const lease = perTurnBatch<Deps, string, Row | undefined>((deps, ids) => leaseMany(deps, ids), (id) => id, { maxInFlight: 1 });
 * const row = await lease(deps, deliveryId);
 * ```
 */
export function perTurnBatch<S extends object, T, R>(
  run: (scope: S, items: T[]) => Promise<R[]>,
  idOf: (item: T) => string,
  options: BatchOptions = {},
): (scope: S, item: T) => Promise<R> {
  const maxInFlight = options.maxInFlight ?? Number.POSITIVE_INFINITY;
  if (!(maxInFlight >= 1)) throw new RangeError(`maxInFlight must be at least 1, got ${maxInFlight}`);

  interface Request {
    item: T;
    id: string;
    resolve: (result: R) => void;
    reject: (err: unknown) => void;
  }
  interface State {
    waiting: Request[];
    /** A drain is queued for the current microtask checkpoint. */
    scheduled: boolean;
    inFlight: number;
    /** The ids of the running calls. */
    running: Set<string>;
  }
  const states = new WeakMap<S, State>();

  function schedule(scope: S, state: State): void {
    if (state.scheduled || state.waiting.length === 0 || state.inFlight >= maxInFlight) return;
    state.scheduled = true;
    queueMicrotask(() => {
      state.scheduled = false;
      drain(scope, state);
    });
  }

  function drain(scope: S, state: State): void {
    while (state.inFlight < maxInFlight && state.waiting.length > 0) {
      const taking: Request[] = [];
      const later: Request[] = [];
      const ids = new Set<string>();
      for (const request of state.waiting) {
        if (ids.has(request.id) || state.running.has(request.id)) later.push(request);
        else {
          ids.add(request.id);
          taking.push(request);
        }
      }
      if (taking.length === 0) return; // all wait for a running call with their id
      state.waiting = later;
      state.inFlight++;
      for (const id of ids) state.running.add(id);
      void call(scope, state, taking, ids);
    }
  }

  async function call(scope: S, state: State, taking: Request[], ids: Set<string>): Promise<void> {
    try {
      const results = await run(
        scope,
        taking.map((r) => r.item),
      );
      for (const [i, request] of taking.entries()) request.resolve(results[i]!);
    } catch (err) {
      for (const request of taking) request.reject(err);
    } finally {
      state.inFlight--;
      for (const id of ids) state.running.delete(id);
      schedule(scope, state);
    }
  }

  return (scope, item) =>
    new Promise<R>((resolve, reject) => {
      let state = states.get(scope);
      if (!state) states.set(scope, (state = { waiting: [], scheduled: false, inFlight: 0, running: new Set() }));
      state.waiting.push({ item, id: idOf(item), resolve, reject });
      schedule(scope, state);
    });
}
