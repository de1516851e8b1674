/** Ports for tests that start servers or child processes of their own. */

/** A port that was free a moment ago and has nothing listening on it now (for a child process to bind, or a receiver that is down). */
export async function freePort(): Promise<number> {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = server.port!;
  await server.stop(true);
  return port;
}
