/**
 * The event catalogue (lib/domain/events/catalogue.ts) against the places that cannot derive from it: the partial
 * index `events_task_facts_idx` (written out in db/schema/tasks.ts and in its latest migration, since `db` imports no
 * `lib`) and the event transitions' selection in lib/domain/side-effects/from-events.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { PgDialect, getTableConfig } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { events } from "@/db/schema/tasks";
import {
  EVENT_CATALOGUE,
  GATE_ROW_TYPES,
  HISTORY_TYPES,
  TASK_FACT_TYPES,
  TIMELINE_MARKER_TYPES,
  type EventType,
} from "@/lib/domain/events/catalogue";
import type { PreparedEvent } from "@/lib/domain/events/ingest";
import { needsTransition } from "@/lib/domain/side-effects/from-events";

const INDEX = "events_task_facts_idx";
const MIGRATIONS = path.join(process.cwd(), "db/migrations");

/** The quoted literals of an `… in ('a', 'b')` predicate, sorted. */
function literals(predicate: string): string[] {
  const list = /\bin\s*\(([^)]*)\)/i.exec(predicate);
  if (!list) throw new Error(`no IN list in ${predicate}`);
  return [...list[1]!.matchAll(/'([^']*)'/g)].map((m) => m[1]!).sort();
}

/** The predicate of the index as the Drizzle schema declares it, as SQL text. */
function schemaPredicate(): string {
  const index = getTableConfig(events).indexes.find((i) => i.config.name === INDEX);
  if (!index?.config.where) throw new Error(`${INDEX} has no predicate in db/schema/tasks.ts`);
  return new PgDialect().sqlToQuery(index.config.where).sql;
}

/** The predicate of the index in the last migration (journal order) that creates it. */
function migrationPredicate(): { tag: string; predicate: string } {
  const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS, "meta/_journal.json"), "utf8")) as {
    entries: Array<{ tag: string }>;
  };
  for (const { tag } of [...journal.entries].reverse()) {
    const text = fs.readFileSync(path.join(MIGRATIONS, `${tag}.sql`), "utf8");
    const create = new RegExp(`CREATE INDEX "${INDEX}"[^;]*WHERE ([^;]*);`).exec(text);
    if (create) return { tag, predicate: create[1]! };
  }
  throw new Error(`no migration creates ${INDEX}`);
}

const sorted = (types: readonly string[]) => [...types].sort();

describe("events_task_facts_idx", () => {
  it("covers exactly the catalogue's task facts (the gate's facts and the timeline's markers) in the schema", () => {
    expect(
      literals(schemaPredicate()),
      `db/schema/tasks.ts ${INDEX} must list TASK_FACT_TYPES (then npm run db:generate for its migration)`,
    ).toEqual(sorted(TASK_FACT_TYPES));
  });

  it("covers exactly the same types in the latest migration that builds it", () => {
    const { tag, predicate } = migrationPredicate();
    expect(literals(predicate), `migration ${tag} must build ${INDEX} over TASK_FACT_TYPES`).toEqual(
      sorted(TASK_FACT_TYPES),
    );
  });

  it("holds every type the gate ships whole and every timeline marker", () => {
    const covered = new Set(literals(schemaPredicate()));
    for (const t of [...GATE_ROW_TYPES, ...TIMELINE_MARKER_TYPES]) expect(covered.has(t), t).toBe(true);
  });
});

describe("retention classes (decision 0054)", () => {
  /** The types `custody_event_retention_class` names as history, in the last migration (journal order) that defines it. */
  function historyTypesInMigration(): { tag: string; types: string[] } {
    const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS, "meta/_journal.json"), "utf8")) as {
      entries: Array<{ tag: string }>;
    };
    for (const { tag } of [...journal.entries].reverse()) {
      const text = fs.readFileSync(path.join(MIGRATIONS, `${tag}.sql`), "utf8");
      const fn = /FUNCTION custody_event_retention_class[\s\S]*?\$\$([\s\S]*?)\$\$/.exec(text);
      if (fn) return { tag, types: literals(fn[1]!) };
    }
    throw new Error("no migration defines custody_event_retention_class");
  }

  it("stores exactly HISTORY_TYPES in the history partitions", () => {
    const { tag, types } = historyTypesInMigration();
    expect(types, `migration ${tag}: custody_event_retention_class must list HISTORY_TYPES`).toEqual(
      sorted(HISTORY_TYPES),
    );
  });

  it("keeps every type a custody rule reads by type among the facts", () => {
    for (const t of [
      ...TASK_FACT_TYPES,
      "egress.allowed",
      "egress.denied",
      "credential.revocation_checked",
      "task.created",
    ])
      expect(HISTORY_TYPES.includes(t as EventType), t).toBe(false);
  });
});

describe("custody transitions", () => {
  const event = (type: string, attrs: Record<string, unknown>): PreparedEvent =>
    ({
      id: "e1",
      task_id: "case-918",
      plane: "tools",
      type,
      occurred_at: "2026-01-01T00:00:00Z",
      attrs,
    }) as PreparedEvent;
  // The attributes under which the types that move custody only sometimes do: a mutating call, or the outcome of a
  // call that already became an effect.
  const moving = { call_id: "c1", mutation: true };
  const withEffect: ReadonlySet<string> = new Set(["case-918\u0000c1"]);

  it.each(Object.keys(EVENT_CATALOGUE) as EventType[])("%s runs a transition as the catalogue says", (type) => {
    const { movesCustody } = EVENT_CATALOGUE[type];
    const plain = needsTransition(event(type, {}), new Set());
    const most = needsTransition(event(type, moving), withEffect);
    if (movesCustody === "always") expect([plain, most]).toEqual([true, true]);
    else if (movesCustody === "some") expect([plain, most]).toEqual([false, true]);
    else expect([plain, most]).toEqual([false, false]);
  });
});
