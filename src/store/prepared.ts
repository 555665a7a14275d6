import type { Compilable, CompiledQuery, QueryExecutorProvider, QueryResult, RawBuilder } from 'kysely';
import { nameStatement } from './statement-names.js';

/**
 * A Kysely query built and compiled once, then executed many times with fresh arguments.
 *
 * Kysely rebuilds and recompiles a query on every call, a large share of a request's CPU
 * (docs/design/prepared-statements.md). `prepared` builds the query once, on first use, from
 * placeholders instead of values, keeps the compiled SQL text, and records which argument goes
 * into which parameter position. Each execution then only fills a fresh parameter array:
 *
 *   const byId = prepared((p: { order_id: string }) =>
 *     db.selectFrom('transactions').selectAll().where('order_id', '=', p.order_id));
 *   const row = await byId.first(db, { order_id });        // or byId.first(trx, ...) in a transaction
 *
 * Rules for `build`, each enforced (the statement throws when compiled or bound):
 * - Every parameter comes from `p`. A constant is written into the SQL text with `sql.lit('pending')`;
 *   any other value (a variable, a constant passed as a parameter) would be compiled once and then
 *   used for every call, so compiling refuses it.
 * - The shape of the SQL must not depend on the arguments (`p.x` is a placeholder, never the
 *   value): build one prepared query per shape instead.
 * - The keys of `p` cannot be listed (they are not known when compiling); an insert names its
 *   columns from a fixed list with `row(p, COLUMNS)` (columns.ts), so the parameter order never
 *   depends on the order of the keys of a caller's object.
 * - An argument may be null but never undefined: binding refuses it. Kysely leaves an undefined
 *   column out of an insert so that its DEFAULT applies; a prepared insert names its columns
 *   beforehand and would send NULL instead. A column left to its DEFAULT is left out of the list.
 */
export interface Prepared<A, R> {
  /** The compiled statement (compiles it on first use). */
  compiled(): CompiledQuery<R>;
  /** The statement with these arguments in their parameter positions. */
  bind(args: A): CompiledQuery<R>;
  execute(executor: QueryExecutorLike, args: A): Promise<QueryResult<R>>;
  /** The first row, or undefined. */
  first(executor: QueryExecutorLike, args: A): Promise<R | undefined>;
}

/** A Kysely instance or transaction: anything that runs a compiled query. */
export interface QueryExecutorLike {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/** Stands for the argument `name` while the query is compiled. */
class Placeholder {
  constructor(readonly name: string) {}
}

const argumentsProxy = <A>(): A =>
  new Proxy(Object.create(null) as object, {
    get(target: Record<string, Placeholder>, key) {
      if (typeof key !== 'string') return undefined;
      return (target[key] ??= new Placeholder(key));
    },
    ownKeys() {
      throw new Error(
        'prepared: the arguments cannot be listed while compiling; name the columns with row(p, COLUMNS)',
      );
    },
  }) as A;

export function prepared<A extends object, R>(build: (p: A) => Compilable<R>): Prepared<A, R> {
  let compiled: CompiledQuery<R> | undefined;
  /** The argument that fills each parameter position. */
  let names: string[] = [];

  const compile = (): CompiledQuery<R> => {
    if (compiled) return compiled;
    const query = build(argumentsProxy<A>()).compile();
    names = query.parameters.map((value, i) => {
      if (value instanceof Placeholder) return value.name;
      throw new Error(
        `prepared: parameter ${i + 1} of \`${query.sql}\` is ${JSON.stringify(value)}, not an argument: write a constant with sql.lit(), pass a value in the arguments`,
      );
    });
    nameStatement(query.sql);
    compiled = query;
    return query;
  };

  const bind = (args: A): CompiledQuery<R> => {
    const query = compile();
    const values = args as Record<string, unknown>;
    const parameters = new Array<unknown>(names.length);
    for (let i = 0; i < names.length; i++) {
      const value = values[names[i]];
      if (value === undefined)
        throw new Error(
          `prepared: argument ${names[i]} is undefined; pass null for NULL (a column left to its DEFAULT must not be in the statement)`,
        );
      parameters[i] = value;
    }
    return { query: query.query, queryId: query.queryId, sql: query.sql, parameters };
  };

  return {
    compiled: compile,
    bind,
    execute: (executor, args) => executor.executeQuery(bind(args)),
    async first(executor, args) {
      const result = await executor.executeQuery(bind(args));
      return result.rows[0];
    },
  };
}

/**
 * The insert row `{ column: p.column }` for exactly these columns, in this order. With
 * `satisfies readonly (keyof T)[]` on the list and a test that it names every column of the table,
 * no column can be left out or misspelt.
 */
export function row<T, K extends keyof T & string>(p: T, columns: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const c of columns) out[c] = p[c];
  return out;
}

/**
 * A statement written as raw SQL (`sql\`...\``), as `prepared` takes it: compiled by `db`'s
 * dialect. Its values are `p`'s, like any prepared statement's; constants go in with `sql.lit`.
 */
export function raw<R>(db: QueryExecutorProvider, query: RawBuilder<R>): Compilable<R> {
  return { compile: () => query.compile(db) };
}
