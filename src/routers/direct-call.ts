/**
 * A procedure called without tRPC's middleware chain, for the hot REST reads (`meta.directRead`): its base's
 * checks ({@link BaseGuard}, the very function the base's middleware runs), its input parsed by the parse
 * function tRPC would use, its resolver, and its output validated — once per view, since a direct read's
 * resolver answers with shared views that are never mutated — and serialized once per view too.
 *
 * tRPC's chain costs each call one options object, one `next` closure and one awaited promise per level,
 * and a copy of the context per `next({ ctx })`; this runs the same steps in one function. What a caller
 * sees is the same: errors come out as tRPC would throw them (a thrown error wrapped by
 * `getTRPCErrorFromUnknown`, an input refused as `BAD_REQUEST` with the schema's issues as its cause, an
 * output refused as "Output validation failed"), so `map-error.ts` answers both ways alike. The procedure
 * stays the one definition: its base, schemas, resolver and metadata are read from it, and a procedure whose
 * chain holds anything else (its own `.use()`, two inputs) is refused at start-up.
 *
 * @module
 */
import type { AnyTRPCProcedure } from "@trpc/server";
import { getParseFn, getTRPCErrorFromUnknown, TRPCError } from "@trpc/server/unstable-core-do-not-import";
import { baseGuardOf, type BaseCall, type BaseGuard, type Context, type Meta } from "./trpc.ts";

/** What a direct call answers: the validated output and its JSON text. */
export interface DirectAnswer {
  output: unknown;
  json: string;
}

/**
 * Calls the procedure with this context and raw input (see the module comment). The answer comes without a
 * promise when nothing on the way waits (the guard's caches, the resolver's, a view validated before); a refusal
 * is then thrown at once, and a rejection otherwise — as a `TRPCError` either way.
 */
export type DirectCall = (ctx: Context, rawInput: Record<string, unknown>) => DirectAnswer | Promise<DirectAnswer>;

interface ProcedureDef {
  type: BaseCall["type"];
  meta: Meta | undefined;
  inputs: unknown[];
  output: unknown;
  middlewares: { _type?: string; name: string }[];
  resolver: (options: Record<string, unknown>) => unknown;
}

type Parse = (value: unknown) => unknown;

const isPromise = (value: unknown): value is Promise<unknown> => value instanceof Promise;

/**
 * The direct call of `procedure`.
 *
 * @throws {Error} when its chain is not a base's guard, then its input and output parsers and its resolver.
 *
 * @example
 * ```ts
 * const call = directCaller(appRouter._def.procedures["auth.whoami"], "auth.whoami");
 * const { json } = await call(ctx, {});
 * ```
 */
export function directCaller(procedure: AnyTRPCProcedure, path: string): DirectCall {
  const def = procedure._def as unknown as ProcedureDef;
  const chain = def.middlewares;
  const guard: BaseGuard | undefined = baseGuardOf(chain[0]);
  const rest = chain.slice(1).map((middleware) => middleware._type ?? middleware.name);
  const expected = def.inputs.length === 1 ? ["input", "output", "resolveMiddleware"] : ["output", "resolveMiddleware"];
  if (!guard || def.inputs.length > 1 || !def.output || rest.join() !== expected.join())
    throw new Error(`directCaller: ${path} is not a base's guard, its input and output and its resolver (${rest.join(", ")})`);
  const { type, meta, resolver } = def;
  const parseInput: Parse | undefined = def.inputs.length === 1 ? getParseFn(def.inputs[0] as never) : undefined;
  const parseOutput: Parse = getParseFn(def.output as never);
  // A view's validated output and JSON, kept as long as the view itself is kept (its cache's entry).
  const answers = new WeakMap<object, DirectAnswer>();

  const validated = (data: unknown): DirectAnswer | Promise<DirectAnswer> => {
    let parsed: unknown;
    try {
      parsed = parseOutput(data);
    } catch (cause) {
      throw outputRefused(cause);
    }
    if (isPromise(parsed))
      return parsed.then(
        (output) => remember(data, output),
        (cause: unknown) => Promise.reject(outputRefused(cause)),
      );
    return remember(data, parsed);
  };
  const remember = (data: unknown, output: unknown): DirectAnswer => {
    const answer = { output, json: JSON.stringify(output) };
    if (typeof data === "object" && data !== null) answers.set(data, answer);
    return answer;
  };
  const answerFor = (data: unknown): DirectAnswer | Promise<DirectAnswer> =>
    (typeof data === "object" && data !== null && answers.get(data)) || validated(data);

  // The parse of a frozen raw input (the bridge's, made once per path: `rest-bridge.ts`), kept with it: a schema's
  // parse is a function of its input alone. Frozen too, as it is shared by every call on that path.
  const parsedInputs = new WeakMap<object, unknown>();

  /** The input parsed, the resolver called, its answer validated (once per view): after the guard admitted the call. */
  const resolve = (ctx: Context, rawInput: Record<string, unknown>, added: object): DirectAnswer | Promise<DirectAnswer> => {
    let input: unknown;
    if (parseInput && parsedInputs.has(rawInput)) input = parsedInputs.get(rawInput);
    else if (parseInput) {
      let parsed: unknown;
      try {
        parsed = parseInput(rawInput);
      } catch (cause) {
        throw inputRefused(cause);
      }
      if (isPromise(parsed))
        return parsed.then(
          (value) => resolveWith(ctx, rawInput, added, value),
          (cause: unknown) => Promise.reject(inputRefused(cause)),
        );
      input = parsed;
      if (Object.isFrozen(rawInput)) parsedInputs.set(rawInput, typeof input === "object" && input !== null ? Object.freeze(input) : input);
    }
    return resolveWith(ctx, rawInput, added, input);
  };
  const resolveWith = (ctx: Context, rawInput: Record<string, unknown>, added: object, input: unknown): DirectAnswer | Promise<DirectAnswer> => {
    // The call's own context (the bridge makes one per request), completed in place rather than copied.
    const result = resolver({
      ctx: Object.assign(ctx, added),
      input,
      meta,
      path,
      type,
      getRawInput: async () => rawInput, // as tRPC gives it to a resolver
      signal: undefined,
      batchIndex: 0,
    });
    return isPromise(result) ? result.then(answerFor) : answerFor(result);
  };

  return (ctx, rawInput) => {
    try {
      const added = guard(ctx, { meta, path, type, getRawInput: () => rawInput });
      const answer = added instanceof Promise ? added.then((value) => resolve(ctx, rawInput, value)) : resolve(ctx, rawInput, added);
      return answer instanceof Promise ? answer.catch(asTRPCError) : answer;
    } catch (cause) {
      throw getTRPCErrorFromUnknown(cause);
    }
  };
}

function inputRefused(cause: unknown): TRPCError {
  return new TRPCError({ code: "BAD_REQUEST", cause });
}

function outputRefused(cause: unknown): TRPCError {
  return new TRPCError({ message: "Output validation failed", code: "INTERNAL_SERVER_ERROR", cause });
}

function asTRPCError(cause: unknown): never {
  throw getTRPCErrorFromUnknown(cause);
}
