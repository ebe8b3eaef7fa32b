/**
 * Row types derived from the Drizzle tables (db/queries/rows.ts): the snake_case keys of `SqlRow` are the columns'
 * real names for every table, the select lists read what their row types say, and a column missing from a list is
 * missing from its row type (checked by the compiler: `npm run typecheck` covers this file).
 */
import { getTableColumns, is, Table } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { selectList, snakeCase, type SqlRow } from "@/db/queries/rows";
import type { SideEffectRow } from "@/db/queries/side-effects";
import { EVENT_COLUMNS, type CheckpointRow, type EventRow, type TaskRow } from "@/db/queries/tasks";
import * as schema from "@/db/schema";
import type { ApprovalRow } from "@/lib/domain/approvals/read";

const dialect = new PgDialect();
const text = (s: Parameters<PgDialect["sqlToQuery"]>[0]) => dialect.sqlToQuery(s).sql;
const tables = Object.entries(schema as Record<string, unknown>).filter((e): e is [string, Table] => is(e[1], Table));

/** The output names of a select list: its items split at the top level, each named by its alias or itself. */
function outputNames(list: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let quoted = false;
  let item = "";
  for (const c of list) {
    if (c === "'") quoted = !quoted;
    if (!quoted && c === "(") depth++;
    if (!quoted && c === ")") depth--;
    if (!quoted && depth === 0 && c === ",") {
      items.push(item.trim());
      item = "";
    } else item += c;
  }
  items.push(item.trim());
  return items.map((i) => i.split(" as ").pop()!);
}

describe("SqlRow keys", () => {
  it("covers every table of the schema", () => {
    expect(tables.map(([name]) => name)).toEqual(expect.arrayContaining(["sideEffects", "tasks", "events"]));
    expect(tables.length).toBeGreaterThan(20);
  });

  it.each(tables)("%s: every property is its column's name in camel case", (_name, table) => {
    const mismatched = Object.entries(getTableColumns(table))
      .filter(([prop, column]) => snakeCase(prop) !== column.name)
      .map(([prop, column]) => `${prop} → ${column.name}`);
    expect(mismatched).toEqual([]);
  });
});

describe("selectList", () => {
  it("lists columns by name and reads timestamps as ISO UTC text under their own name", () => {
    expect(text(selectList(schema.sideEffects, ["name", "intent_at", "receipt"]))).toBe(
      `name, to_char(intent_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as intent_at, receipt`,
    );
  });

  it("qualifies the columns with a table alias when asked", () => {
    expect(text(selectList(schema.events, ["event_id", "occurred_at"], "e"))).toBe(
      `e.event_id, to_char(e.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as occurred_at`,
    );
  });

  it("refuses a name that is not a column", () => {
    expect(() =>
      selectList(schema.events, ["event_id", "nope" as keyof SqlRow<typeof schema.events> & string]),
    ).toThrow("nope is not a column");
  });

  it("reads every column an event row holds", () => {
    const listed = outputNames(text(EVENT_COLUMNS));
    const row: Record<Exclude<keyof EventRow, "attrs_cut">, true> = {
      event_id: true,
      task_id: true,
      plane: true,
      type: true,
      occurred_at: true,
      received_at: true,
      environment_id: true,
      attempt: true,
      actor: true,
      attrs: true,
      redaction_count: true,
      redaction_kinds: true,
    };
    expect(listed).toEqual(Object.keys(row));
  });
});

describe("row types follow their lists", () => {
  it("leaves out of the type what the list leaves out", () => {
    const effect = {} as SideEffectRow;
    const task = {} as TaskRow;
    const checkpoint = {} as CheckpointRow;
    const approval = {} as ApprovalRow;
    // @ts-expect-error created_at is not in the side effects' list
    expect(effect.created_at).toBeUndefined();
    // @ts-expect-error updated_at is not in the task's list
    expect(task.updated_at).toBeUndefined();
    // @ts-expect-error tenant_id is never listed
    expect(checkpoint.tenant_id).toBeUndefined();
    // @ts-expect-error tenant_id is never listed
    expect(approval.tenant_id).toBeUndefined();
    // Schema types carry through: timestamps as text, enums as their unions.
    const status: SideEffectRow["status"] = "in_flight";
    const at: ApprovalRow["requested_at"] = "2026-01-01T00:00:00.000000Z";
    expect([status, at]).toHaveLength(2);
  });
});
