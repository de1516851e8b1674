/**
 * Statements built and compiled once, run many times with new values.
 *
 * Kysely builds an operation tree and compiles it to SQL on every call: 20–40 µs of CPU per statement on
 * these machines (a 17-column insert: 37 µs, a 4-condition select: 23 µs; the webhook lease CTE ~100 µs),
 * about what postgres.js itself spends sending it. On the payment and delivery paths, which run several
 * statements per request, that was ~10–18 % of the gateway's CPU. A precompiled statement is written with the
 * same query builder (so it is still type checked against the schema), taking its values from named
 * stand-ins (`p.id`, `p.now`…); the first run compiles it, and every run after only fills the parameters in.
 *
 * A statement whose clauses or columns vary (an `UPDATE` of the columns that changed, the record of an
 * attempt by its outcome) takes a `shape` key: `build` receives it and must derive the statement's form from
 * it alone, never from the values. One compiled form is kept per shape.
 *
 * Both drivers compile with Kysely's PostgreSQL compiler (postgres.js and PGlite), and no Kysely plugin is
 * installed, so one compiled text serves a database handle and its transactions.
 *
 * Where the compiled forms live: with the database the statement runs on, not in the module. A statement
 * is a definition (a module constant, like a function); its compiled forms are kept in a map that hangs
 * off the database's Kysely adapter — the one object a handle (`deps.db`), its transactions and its
 * `withPlugin` copies share — created at its first run there ({@link compiledStatementsOf}). So each
 * gateway, which opens its own database, compiles into its own map, and two gateways in one process share
 * nothing; no call site passes anything more than the database it already passes (so a transaction
 * deep in a service needs no extra argument). A run costs what it did plus reaching the adapter (a method
 * call and two property reads) and one more map look-up (the statement's entry, then its shape's), with
 * no allocation. The adapter is reached through `getExecutor()`, the method of Kysely's public
 * `QueryExecutorProvider` interface (what `` sql`…`.execute(db) `` runs through).
 *
 * Limits, checked at the first run of a shape: a stand-in must be a whole parameter (a value in `.values()`,
 * `.set()`, a comparison, `eb.val()` or a `sql` template), not part of one (inside a jsonb object) nor the
 * input of arithmetic or a method call (pass `leaseUntil`, not `p.now + lease`), and never an `in` list (it
 * would be sent as one value); and a value may not be `undefined` (pass `null`: an insert would otherwise
 * leave the column out).
 *
 * @example
 * ```ts
 * const byId = precompile<{ id: string }>()((db, p) => db.selectFrom("payments").selectAll().where("id", "=", p.id));
 * const { rows } = await byId(deps.db, { id: "pay_…" });
 *
 * const touch = precompile<{ id: string; now: Date }>()((db, p, shape) =>
 *   db.updateTable("deliveries").set(shape === "unlock" ? { locked_until: null, updated_at: p.now } : { updated_at: p.now }).where("id", "=", p.id),
 * );
 * await touch(deps.db, { id, now: new Date() }, "unlock");
 * ```
 *
 * @module
 */
import { CompiledQuery, type Compilable, type DialectAdapter, type Kysely, type QueryResult, type Transaction } from "kysely";
import type { Database } from "./schema.ts";

/** Where a value goes; replaced by the run's value in the compiled parameters. */
class Placeholder {
  constructor(readonly name: string) {}
}

type Compiled = { sql: string; slots: (Placeholder | { constant: unknown })[] };

/** How a statement is built from its stand-ins and shape (the argument of `precompile()(…)`): its identity. */
type Build = (db: Kysely<Database>, p: never, shape: string) => Compilable<unknown>;

/** The compiled forms of one database's statements: by statement, then by shape. */
export type CompiledStatements = Map<Build, Map<string, Compiled>>;

/** The adapter's property holding its database's compiled statements (a symbol: no clash with Kysely's own). */
const COMPILED = Symbol("passerelle.compiledStatements");

/**
 * The compiled statements of the database `db` runs on (its handle, a transaction or a `withPlugin` copy of
 * it: they share one adapter), created empty at the first call.
 */
export function compiledStatementsOf(db: Kysely<Database> | Transaction<Database>): CompiledStatements {
  const adapter = db.getExecutor().adapter as DialectAdapter & { [COMPILED]?: CompiledStatements };
  return (adapter[COMPILED] ??= new Map());
}

/** One statement: give it a database (or a transaction), the values, and its shape when it has several (default `""`). */
export type PrecompiledStatement<P, R> = (db: Kysely<Database> | Transaction<Database>, values: P, shape?: string) => Promise<QueryResult<R>>;

/**
 * Declares a statement with named values `P`. Curried so that `P` is given and the row type inferred.
 *
 * @throws {Error} at the first run of a shape when a placeholder is not a whole parameter; at any run when a value is undefined.
 */
export function precompile<P extends object>() {
  return <R>(build: (db: Kysely<Database>, p: P, shape: string) => Compilable<R>): PrecompiledStatement<P, R> => {
    function compile(db: Kysely<Database>, shape: string): Compiled {
      const names = new Set<string>();
      const placeholders = new Proxy({} as P, {
        get(_, name) {
          if (typeof name !== "string") return undefined;
          names.add(name);
          return new Placeholder(name);
        },
      });
      const query = build(db, placeholders, shape).compile();
      const slots = query.parameters.map((value) => (value instanceof Placeholder ? value : { constant: value }));
      const used = new Set(slots.flatMap((slot) => (slot instanceof Placeholder ? [slot.name] : [])));
      for (const name of names) if (!used.has(name)) throw new Error(`precompiled statement: the value "${name}" is not a whole parameter of ${query.sql}`);
      return { sql: query.sql, slots };
    }

    return async (db, values, shape = "") => {
      const statements = compiledStatementsOf(db);
      let byShape = statements.get(build as Build);
      if (!byShape) statements.set(build as Build, (byShape = new Map()));
      let compiled = byShape.get(shape);
      if (!compiled) byShape.set(shape, (compiled = compile(db as Kysely<Database>, shape)));
      const source = values as Record<string, unknown>;
      const parameters = compiled.slots.map((slot) => {
        if (!(slot instanceof Placeholder)) return slot.constant;
        const value = source[slot.name];
        if (value === undefined) throw new Error(`precompiled statement: no value for "${slot.name}"`);
        return value;
      });
      return db.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters));
    };
  };
}
