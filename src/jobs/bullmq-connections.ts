/**
 * The ioredis connections of one BullMQ driver instance, and how to end them even while Redis is
 * unreachable.
 *
 * Two traps shape this file:
 * - ioredis `disconnect()` on a client that is between reconnect attempts only clears the retry
 *   timer: no `close`/`end` event fires and queued commands never settle (redis/ioredis#2169).
 *   BullMQ disconnects its worker connections that way when a worker closes, then waits for `end`:
 *   during an outage the close hung forever and a lock-renewal timer kept the process alive.
 *   Instead, such a client is told to stop retrying: it ends by itself at its next failed attempt
 *   (at most {@link MAX_RECONNECT_DELAY_MS} later), which rejects what it had queued and emits `end`.
 * - BullMQ duplicates the connection it is given (twice per worker) and owns the copies; they are
 *   wrapped here for the above, and tracked so none outlives `close()`.
 *
 * @module
 */

import type { Redis } from "ioredis";
import { createRedisClient } from "./redis-client.ts";
import { withTimeout } from "./with-timeout.ts";

/** Longest pause between reconnect attempts. */
export const MAX_RECONNECT_DELAY_MS = 2000;

/** Connections of one driver instance; nothing connects before the first call that needs to. */
export interface BullmqConnections {
  /** The connection the queues share and BullMQ duplicates for workers (`maxRetriesPerRequest: null`). */
  shared(): Redis;
  /** PING on a separate connection without an offline queue: rejects at once while disconnected, or after `timeoutMs`. */
  ping(timeoutMs: number): Promise<void>;
  /** From now on every connection ends at its next failed attempt instead of retrying. */
  stopReconnecting(): void;
  /** Ends every connection still open: QUIT (bounded) when connected, else a disconnect. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Creates the connection set of a BullMQ driver instance.
 *
 * @example
 * ```ts
 * const connections = createBullmqConnections("redis://127.0.0.1:6379", (source, err) => log(err));
 * new Queue("webhooks", { connection: connections.shared(), prefix });
 * ```
 */
export function createBullmqConnections(redisUrl: string, onError: (source: string, err: Error) => void, onReady: () => void = () => {}): BullmqConnections {
  let stopping = false;
  let shared: Redis | undefined;
  let pinger: Redis | undefined;
  const duplicates = new Set<Redis>();
  const retryStrategy = (times: number): number | null => (stopping ? null : Math.min(times * 100, MAX_RECONNECT_DELAY_MS));

  /** Hangs up on a client that reconnects after closing began (Redis came back meanwhile). */
  function endIfStopping(client: Redis): void {
    client.on("ready", () => {
      if (stopping) client.disconnect();
    });
  }

  function trackDuplicates(client: Redis): void {
    const duplicate = client.duplicate.bind(client);
    client.duplicate = ((override?: Parameters<Redis["duplicate"]>[0]) => {
      let ending = false;
      const copy = duplicate({
        ...override,
        retryStrategy: (times: number) => (ending ? null : retryStrategy(times)),
      });
      const disconnect = copy.disconnect.bind(copy);
      copy.disconnect = (reconnect = false) => {
        if (!reconnect && copy.status === "reconnecting") {
          ending = true; // ends at its next attempt; disconnect() would strand it
          return;
        }
        disconnect(reconnect);
      };
      copy.on("ready", () => {
        if (ending || stopping) disconnect();
        else onReady();
      });
      // BullMQ removes its listeners when it lets go of the copy; without one, ioredis prints
      // "Unhandled error event" for each failed attempt until the copy ends.
      copy.on("error", (err: Error) => onError("worker connection", err));
      duplicates.add(copy);
      copy.once("end", () => duplicates.delete(copy));
      return copy;
    }) as Redis["duplicate"];
  }

  async function end(client: Redis, timeoutMs: number): Promise<void> {
    if (client.status === "end") return;
    if (client.status === "reconnecting") {
      // disconnect() would strand it (see above); it ends at its next attempt.
      await withTimeout(new Promise((resolve) => client.once("end", resolve)), timeoutMs, "closing a connection").catch(() => {});
      return;
    }
    if (client.status === "ready") {
      try {
        await withTimeout(client.quit(), timeoutMs, "closing a connection");
        return;
      } catch {
        // fall through to disconnect
      }
    }
    client.disconnect();
  }

  return {
    shared(): Redis {
      if (!shared) {
        shared = createRedisClient(redisUrl, { maxRetriesPerRequest: null, retryStrategy });
        shared.on("error", (err: Error) => onError("connection", err));
        shared.on("ready", onReady);
        endIfStopping(shared);
        trackDuplicates(shared);
      }
      return shared;
    },

    async ping(timeoutMs: number): Promise<void> {
      if (!pinger) {
        pinger = createRedisClient(redisUrl, {
          lazyConnect: true,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          connectTimeout: timeoutMs,
          retryStrategy,
        });
        pinger.on("error", () => {}); // reported through ping()'s rejection
        endIfStopping(pinger);
      }
      const client = pinger;
      const pinged = (async () => {
        if (client.status === "wait") await client.connect();
        await client.ping();
      })();
      await withTimeout(pinged, timeoutMs, "ping");
    },

    stopReconnecting(): void {
      stopping = true;
    },

    async close(timeoutMs: number): Promise<void> {
      stopping = true;
      const clients = [shared, pinger, ...duplicates].filter((client): client is Redis => client !== undefined);
      await Promise.all(clients.map((client) => end(client, timeoutMs)));
    },
  };
}
