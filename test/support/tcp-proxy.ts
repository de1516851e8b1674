/**
 * A TCP proxy on 127.0.0.1 in front of a real server, which a test can make refuse connections, swallow
 * them (accept and never answer, as a host that vanished without a reset) or forward them again — so a
 * test can take a real PostgreSQL "down" and bring it back without touching the server other tests use.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { freePort } from "./ports.ts";

export interface TcpProxy {
  /** The port the proxy listens on (the same one across modes). */
  readonly port: number;
  /** Forwards every new connection to the target (the initial mode). */
  forward(): Promise<void>;
  /** Resets the connections it carries and stops listening: new connections are refused. */
  refuse(): Promise<void>;
  /** Listens and accepts, but never answers; connections it carried are reset. */
  blackhole(): Promise<void>;
  /** Stops for good. */
  stop(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: "forward" | "blackhole" = "forward";
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  // Outside the ephemeral range (freePort): it listens again on this port after a refusal, and a port from
  // that range could have gone to another test's connection in between.
  let port = await freePort();

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };

  const listen = async () => {
    const s = createServer((client) => {
      track(client);
      if (mode === "blackhole") return;
      const upstream = createConnection(target);
      track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => resolve());
    });
    const address = s.address();
    if (address && typeof address === "object") port = address.port;
    server = s;
  };

  const resetAll = () => {
    for (const socket of sockets) socket.resetAndDestroy?.() ?? socket.destroy();
    sockets.clear();
  };

  const stopListening = async () => {
    const s = server;
    server = undefined;
    resetAll();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };

  await listen();
  return {
    get port() {
      return port;
    },
    async forward() {
      mode = "forward";
      if (!server) await listen();
    },
    async refuse() {
      await stopListening();
    },
    async blackhole() {
      mode = "blackhole";
      resetAll();
      if (!server) await listen();
    },
    async stop() {
      await stopListening();
    },
  };
}
