/**
 * Row types of raw statements derived from the Drizzle tables, and the select lists that go with them.
 *
 * A raw `sql` statement returns the columns under their own names (`intent_at`) and as the driver reads them, where
 * Drizzle's `$inferSelect` has the schema's property names (`intentAt`) and mapped values. {@link SqlRow} is the
 * table's row as raw statements here read it: snake_case keys (the schema names every property as its column's name
 * in camel case — tests/unit/row-types.test.ts checks every table), timestamps as ISO 8601 UTC text (the lists read
 * them through `isoUtc`), bigint as the number or the text postgres.js gives, everything else as the schema types it.
 *
 * {@link selectList} makes the list of a statement from the same names its row type picks, so a row type and its
 * select list cannot disagree: a column left out of the names is left out of the type too, and code reading it does
 * not compile.
 */
import { getTableColumns, sql, type Column, type SQL, type Table } from "drizzle-orm";
import { isoUtc } from "./sql-helpers";

/** `intentAt` → `intent_at` (digits stay where they are: `sha256`). */
export type SnakeCase<S extends string> = S extends `${infer C}${infer Rest}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<Rest>}`
  : S;

/**
 * The runtime twin of {@link SnakeCase}.
 * @internal The row-types test derives column names with it.
 */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Timestamp columns: read as text by {@link selectList}. */
const TIMESTAMP_TYPES = new Set(["PgTimestamp", "PgTimestampString"]);

type Timestamp = { _: { columnType: "PgTimestamp" | "PgTimestampString" } };
type BigInt53 = { _: { columnType: "PgBigInt53" } };

/** A column's value as a raw statement returns it, given its `$inferSelect` value `V`. */
type RawValue<C, V> = C extends Timestamp
  ? V extends Date
    ? string
    : V
  : C extends BigInt53
    ? V extends number
      ? number | string
      : V
    : V;

/** A table's row as raw statements read it: column names as keys (see the module comment). */
export type SqlRow<T extends Table> = {
  [K in keyof T["_"]["columns"] & keyof T["$inferSelect"] & string as SnakeCase<K>]: RawValue<
    T["_"]["columns"][K],
    T["$inferSelect"][K]
  >;
};

/** The row of a statement that selects `names` of table `T` with {@link selectList}. */
export type SelectedRow<T extends Table, Names extends readonly (keyof SqlRow<T>)[]> = Pick<SqlRow<T>, Names[number]>;

/**
 * The select list for `names` of `table`: each column by its name, a timestamp as `isoUtc(column) as column`.
 * @param qualifier a table alias to qualify the columns with (`e` → `e.event_id`), when the statement joins.
 * @throws Error when a name is not a column of the table (the types prevent it; a cast would not).
 */
export function selectList<T extends Table>(
  table: T,
  names: readonly (keyof SqlRow<T> & string)[],
  qualifier?: string,
): SQL {
  const columns = new Map<string, Column>(Object.values(getTableColumns(table)).map((c) => [c.name, c]));
  return sql.join(
    names.map((name) => {
      const column = columns.get(name);
      if (!column) throw new Error(`${name} is not a column of the table`);
      const ref = qualifier ? `${qualifier}.${name}` : name;
      return TIMESTAMP_TYPES.has(column.columnType) ? sql`${isoUtc(ref)} as ${sql.raw(name)}` : sql.raw(ref);
    }),
    sql`, `,
  );
}
