/**
 * The one router: the typed tRPC API at `/trpc`, and — through each procedure's `meta.openapi` — the REST
 * surface and the OpenAPI document.
 */
import { authRouter } from "./auth.ts";
import { router } from "./trpc.ts";

export const appRouter = router({
  auth: authRouter,
});

/** The router's type, for `@trpc/client`. */
export type AppRouter = typeof appRouter;
