/**
 * The gateway's router as a client sees it, for `tsc` to emit as `client/generated/router.d.ts` (`bun run client:types`).
 *
 * `AppRouter` itself carries the server's request context (`Deps`: the database, the queue, the logger…)
 * and trpc-to-openapi's metadata type, so its declarations pull in the gateway's whole type graph and
 * libraries a merchant never installs. A client needs only each procedure's kind, input and output, the
 * error shape and the transformer: `procedures` below is that record, mapped from `AppRouter` so that the
 * declaration emitter writes it out in full (anonymous mapped types are printed expanded), and
 * {@link AppRouter} rebuilds a router type on it with an empty context and metadata. The emitted file
 * imports nothing but `@trpc/server`; `scripts/client-types.ts` checks that it stays so.
 */
import type {
  inferRouterInputs,
  inferRouterOutputs,
  TRPCBuiltRouter,
  TRPCMutationProcedure,
  TRPCQueryProcedure,
  TRPCSubscriptionProcedure,
} from "@trpc/server";
import type { AppRouter as GatewayRouter } from "../../src/mod.ts";

type Types = GatewayRouter["_def"]["_config"]["$types"];

/** A procedure keeps its kind, input and output; a nested router is mapped in turn. */
type ClientProcedure<P> =
  P extends TRPCQueryProcedure<infer D>
    ? TRPCQueryProcedure<{ input: D["input"]; output: D["output"]; meta: object }>
    : P extends TRPCMutationProcedure<infer D>
      ? TRPCMutationProcedure<{ input: D["input"]; output: D["output"]; meta: object }>
      : P extends TRPCSubscriptionProcedure<infer D>
        ? TRPCSubscriptionProcedure<{ input: D["input"]; output: D["output"]; meta: object }>
        : ClientRecord<P>;
type ClientRecord<R> = R extends object ? { [K in keyof R]: ClientProcedure<R[K]> } : never;

// Type-level only: no JavaScript is emitted for this file (declarations only), so nothing calls these.
declare function clientRecord<R>(record: R): ClientRecord<R>;
declare function rootTypes<T extends Types>(types: T): { errorShape: T["errorShape"]; transformer: T["transformer"] };

/** Every procedure of the gateway by path, with its input and output types. */
export const procedures = clientRecord(null as unknown as GatewayRouter["_def"]["record"]);
/** The error shape and the transformer of the gateway's tRPC instance. */
export const root = rootTypes(null as unknown as Types);

/** The gateway's tRPC router type, for `createTRPCClient<AppRouter>` (or `createPasserelleClient`). */
export type AppRouter = TRPCBuiltRouter<
  { ctx: object; meta: object; errorShape: (typeof root)["errorShape"]; transformer: (typeof root)["transformer"] },
  typeof procedures
>;

// The view answers exactly what the gateway's router does: every path, input and output (checked by
// this file's compilation, which the build runs).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _inputsAgree: Same<inferRouterInputs<AppRouter>, inferRouterInputs<GatewayRouter>> = true;
const _outputsAgree: Same<inferRouterOutputs<AppRouter>, inferRouterOutputs<GatewayRouter>> = true;
