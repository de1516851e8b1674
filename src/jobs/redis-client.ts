/**
 * One Redis client factory for the whole gateway (BullMQ's connections, the rate limiter): a single
 * server from `REDIS_URL`, or a Redis Cluster from `REDIS_CLUSTER_NODES` (docs/fleet.md). The configuration
 * carries either as one string, the cluster's as `redis-cluster://host:port,host:port,…` (a form of ours,
 * never sent to Redis), so every place that takes a Redis address takes both.
 *
 * On a cluster every key of one BullMQ queue (and each rate-limit bucket) must hash to one slot: the
 * configuration hash-tags `QUEUE_PREFIX` (`{passerelle}`) when it names a cluster.
 *
 * @module
 */
import { Cluster, Redis, type RedisOptions } from "ioredis";

const CLUSTER = "redis-cluster://";

/** The address of a cluster from its seed nodes (`host:port` each). */
export function clusterAddress(nodes: readonly string[]): string {
  return `${CLUSTER}${nodes.join(",")}`;
}

/** Whether `address` names a Redis Cluster ({@link clusterAddress}). */
export function isClusterAddress(address: string): boolean {
  return address.startsWith(CLUSTER);
}

/** The seed nodes of a cluster address. */
export function clusterNodes(address: string): { host: string; port: number }[] {
  return address
    .slice(CLUSTER.length)
    .split(",")
    .map((node) => {
      const at = node.lastIndexOf(":");
      return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
    });
}

/**
 * A client for `address` with `options`: `new Redis(url, options)` for a server; for a cluster, an ioredis
 * `Cluster` whose nodes take `options` and whose reconnects follow its `retryStrategy`.
 *
 * The cluster is returned as a `Redis`: ioredis's `Cluster` answers the same commands and the same life
 * cycle (`status`, `connect`, `quit`, `disconnect`, `duplicate`, the `ready` / `error` / `end` events) that
 * the gateway uses, and BullMQ takes either.
 */
export function createRedisClient(address: string, options: RedisOptions = {}): Redis {
  if (!isClusterAddress(address)) return new Redis(address, options);
  const { retryStrategy, lazyConnect, enableOfflineQueue, ...nodeOptions } = options;
  const cluster = new Cluster(clusterNodes(address), {
    redisOptions: nodeOptions,
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) } : {}),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
  });
  return cluster as unknown as Redis;
}
