/**
 * The two ways a batch reaches the one `INSERT … ON CONFLICT DO NOTHING` into `events` (decision 0021): `COPY` into a
 * temporary staging table (PostgreSQL, batches of COPY_MIN_EVENTS or more), one JSON document (smaller batches, and
 * PGlite — the embedded default, which the demo runs on).
 * Both store the same rows and answer the same results, text that COPY escapes included; the staging table serves
 * the walled role and the owner on one connection and two batches in one transaction; a COPY the server refuses fails
 * its transaction instead of hanging; and the duplicate probe keeps to the primary key for a tenant the planner's
 * statistics do not know yet.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { copyIn, openDatabase, queryRows, type Db } from "@/db";
import type { EventInput, EventResult } from "@/lib/contract/api";
import type { Actor, ApiKeyActor } from "@/lib/domain/authz";
import { generateSigningKey } from "@/lib/domain/crypto/signing";
import { COPY_MIN_EVENTS, ingestEvents, prepareBatch, storeEvents, storedById } from "@/lib/domain/events/ingest";
import { createTestTenant, makeEvent, newTaskId, openTestDb } from "./helpers";

type Handle = Awaited<ReturnType<typeof openDatabase>>;

const { key } = generateSigningKey();
let pg: Handle;
beforeAll(async () => {
  pg = await openTestDb();
});
afterAll(async () => {
  await pg?.close();
});

function runtime(tenantId: string): ApiKeyActor {
  return { kind: "api_key", tenantId, keyId: "00000000-0000-0000-0000-000000000000", keyName: "test" };
}

/** `n` plain events with fixed ids `fill-<tag>-<i>`, enough to send a batch through the staging table. */
function filler(taskId: string, tag: string, n: number): EventInput[] {
  return Array.from({ length: n }, (_, i) =>
    makeEvent(taskId, {
      id: `fill-${tag}-${i}`,
      plane: "tools",
      type: "tool.completed",
      occurred_at: new Date(Date.UTC(2025, 4, 1, 10, 0, 0, i)).toISOString(),
      attrs: { call_id: `call-${tag}-${i}`, ok: true },
    }),
  );
}

/**
 * Two batches, each large enough for the staging table on PostgreSQL, whose text exercises the escapes of COPY's text
 * format that valid events reach — backslashes and escape-like text in ids, sandbox ids and actors (which refuse
 * control characters, lib/domain/names.ts), and tabs, newlines and carriage returns in attrs — with a secret, repeats
 * and conflicts (fixed ids: each run has a tenant of its own). tests/unit/ingest-copy-data.test.ts covers the escapes
 * of control characters in those fields too.
 */
function batches(taskId: string): [EventInput[], EventInput[]] {
  const at = (s: number) => new Date(Date.UTC(2025, 4, 1, 9, 0, s, 123)).toISOString();
  const tricky: EventInput = {
    id: "tab\\there\\back\\nline\\rcr",
    task_id: taskId,
    plane: "environment",
    type: "sandbox.created",
    occurred_at: "2025-05-01T09:00:00.123456Z",
    attempt: 1,
    environment_id: "sbx\\1\\t2",
    actor: "agent\\n not a newline \\t tab",
    attrs: {
      quote: 'a "b" \\ c',
      nl: "x\ny\tz\r",
      uni: "é ✓ \u2028 😀",
      nested: { list: [1, 2.5, -3e-7, null, true], empty: {} },
    },
  };
  const secret = makeEvent(taskId, {
    id: "secret",
    occurred_at: at(1),
    attrs: { authorization: "Bearer sk-test-0123456789abcdefghijklmnop", note: "ok" },
  });
  const plain = makeEvent(taskId, {
    id: "plain",
    occurred_at: at(2),
    plane: "tools",
    type: "tool.called",
    attrs: { tool: "search", call_id: "c1" },
  });
  const repeated = makeEvent(taskId, { id: "repeated", occurred_at: at(3), attrs: { v: 1 } });
  const earlier = filler(taskId, "a", COPY_MIN_EVENTS);
  const first = [tricky, secret, repeated, { ...repeated }, { ...repeated, attrs: { v: 2 } }, plain, ...earlier];
  const second = [
    { ...tricky },
    { ...secret },
    { ...plain, attrs: { tool: "search", call_id: "c2" } },
    makeEvent(taskId, { id: "new\\one", occurred_at: at(4), attrs: {} }),
    ...earlier.slice(0, 10),
    ...filler(taskId, "b", COPY_MIN_EVENTS),
  ];
  return [first, second];
}

/** What an engine answers and stores for the same two batches, with ids made comparable across engines. */
async function ingestOn(h: Handle): Promise<{ results: EventResult[][]; rows: Array<Record<string, unknown>> }> {
  const t = await createTestTenant(h.db, { roles: [] });
  const db = h.scoped({ tenantId: t.tenantId });
  const taskId = "task-same-on-both";
  const results: EventResult[][] = [];
  for (const batch of batches(taskId))
    results.push(
      (await ingestEvents({ db, actor: runtime(t.tenantId), signingKey: key }, { body: { events: batch } })).results,
    );
  const rows = await queryRows<Record<string, unknown>>(
    h.db,
    sql`select event_id, task_id, plane::text, type, to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as occurred_at,
               environment_id, attempt, actor, attrs::text as attrs, redaction_count, redaction_kinds
        from events where tenant_id = ${t.tenantId} order by event_id`,
  );
  return { results, rows };
}

describe("ingest on PostgreSQL (COPY staging) and PGlite (JSON batch)", () => {
  it("stores the same rows and answers the same results on both engines", async () => {
    const onPostgres = await ingestOn(pg);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-ingest-"));
    const lite = await openDatabase({ dir });
    let onPglite: Awaited<ReturnType<typeof ingestOn>>;
    try {
      onPglite = await ingestOn(lite);
    } finally {
      await lite.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const stored = (n: number) => Array<string>(n).fill("stored");
    expect(onPostgres.results[0]!.map((r) => r.status)).toEqual([
      "stored",
      "stored",
      "stored",
      "duplicate",
      "conflict",
      "stored",
      ...stored(COPY_MIN_EVENTS),
    ]);
    expect(onPostgres.results[1]!.map((r) => r.status)).toEqual([
      "duplicate",
      "duplicate",
      "conflict",
      "stored",
      ...Array<string>(10).fill("duplicate"),
      ...stored(COPY_MIN_EVENTS),
    ]);
    expect(onPostgres.rows).toHaveLength(5 + 2 * COPY_MIN_EVENTS);
    const byId = new Map(onPostgres.rows.map((r) => [r.event_id, r]));
    const tricky = byId.get("tab\\there\\back\\nline\\rcr")!;
    expect(tricky).toMatchObject({
      environment_id: "sbx\\1\\t2",
      actor: "agent\\n not a newline \\t tab",
      attempt: 1,
    });
    expect(JSON.parse(tricky.attrs as string)).toEqual({
      quote: 'a "b" \\ c',
      nl: "x\ny\tz\r",
      uni: "é ✓ \u2028 😀",
      nested: { list: [1, 2.5, -3e-7, null, true], empty: {} },
    });
    expect(byId.get("secret")).toMatchObject({ redaction_count: 1, redaction_kinds: [expect.any(String)] });
    expect(byId.get("secret")!.attrs).not.toContain("sk-test");
    expect(onPglite!).toEqual(onPostgres);
  }, 180_000);

  it("serves the owner and the walled role on one connection, and two batches in one transaction", async () => {
    const one = await openDatabase({ url: inject("databaseUrl"), max: 1 });
    try {
      const t = await createTestTenant(one.db, { roles: [] });
      const sender: Actor = { kind: "system", tenantId: t.tenantId, label: "ingest-paths test" };
      const taskId = newTaskId("stage");
      const batch = (...events: EventInput[]) => prepareBatch({ events }).prepared;
      // The owner creates the connection's staging table; the walled role then copies into it.
      const byOwner = await storeEvents(one.db, sender, batch(...filler(taskId, "owner", COPY_MIN_EVENTS)), key);
      expect(new Set([...byOwner.values()].map((o) => o.status))).toEqual(new Set(["stored"]));
      const walled = one.scoped({ tenantId: t.tenantId });
      const [a, b] = [filler(taskId, "a", COPY_MIN_EVENTS), filler(taskId, "b", COPY_MIN_EVENTS)];
      const outcomes = await walled.transaction(async (tx) => [
        await storeEvents(tx as unknown as Db, sender, batch(...a), key),
        await storeEvents(tx as unknown as Db, sender, batch(...b, ...a.slice(0, 5)), key),
      ]);
      const statuses = outcomes.map((o) => [...o].map(([id, v]) => `${id} ${v.status}`).sort());
      expect(statuses).toEqual([
        a.map((e) => `${e.id} stored`).sort(),
        [...b.map((e) => `${e.id} stored`), ...a.slice(0, 5).map((e) => `${e.id} duplicate`)].sort(),
      ]);
      const [n] = await queryRows<{ n: number }>(
        one.db,
        sql`select count(*)::int as n from events where tenant_id = ${t.tenantId}`,
      );
      expect(n!.n).toBe(3 * COPY_MIN_EVENTS);
      // The connection's staging table is the one these batches went through (none left over: emptied at commit).
      const [stage] = await queryRows<{ n: number }>(
        one.db,
        sql`select count(*)::int as n from pg_temp.events_ingest_stage_2`,
      );
      expect(stage!.n).toBe(0);
    } finally {
      await one.close();
    }
  });

  it("fails the transaction when the server refuses the copied data, instead of hanging", async () => {
    const before = "create temp table if not exists ingest_refusal_probe (n integer not null) on commit drop";
    const refused = pg.db.transaction(async (tx) =>
      copyIn(tx, "copy ingest_refusal_probe from stdin", () => "1\nnot a number\n", before),
    );
    await expect(refused).rejects.toThrow(/invalid input syntax for type integer/);
    const copied = await pg.db.transaction(async (tx) =>
      copyIn(tx, "copy ingest_refusal_probe from stdin", () => "1\n2\n", before),
    );
    expect(copied).toBe(2);
    await expect(copyIn(pg.db, "copy ingest_refusal_probe from stdin", () => "", before)).rejects.toThrow(
      /needs a transaction/,
    );
  });

  it("probes stored ids through the id index of every partition for a tenant the statistics do not know yet", async () => {
    const known = await createTestTenant(pg.db, { roles: [] });
    await pg.db.execute(sql`
      insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, attrs, retention_class)
      select ${known.tenantId}::uuid, 'known-' || g, 'task-' || (g % 20), 'tools', 'tool.called', now(), '{}'::jsonb, 'history'
      from generate_series(1, 3000) g`);
    await pg.db.execute(sql`analyze events`);
    const fresh = await createTestTenant(pg.db, { roles: [] });
    const plan = await pg.scoped({ tenantId: fresh.tenantId }).transaction(async (tx) => {
      const [row] = await queryRows<{ "QUERY PLAN": unknown }>(
        tx as unknown as Db,
        sql`explain (format json) select x.event_id from (values ('a'), ('b')) as x(event_id)
            join lateral (${storedById(fresh.tenantId)}) e on true`,
      );
      return row!["QUERY PLAN"];
    });
    // The partition that holds the tenant's rows (this month's) is probed through its copy of events_id_idx, with
    // the id in the index condition; empty partitions may be probed any way (they cost nothing).
    const [month] = await queryRows<{ part: string }>(
      pg.db,
      sql`select tableoid::regclass::text as part from events where tenant_id = ${known.tenantId} limit 1`,
    );
    const scans: Array<Record<string, unknown>> = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (!node || typeof node !== "object") return;
      const n = node as Record<string, unknown>;
      if (n["Relation Name"] === month!.part) scans.push(n);
      Object.values(n).forEach(walk);
    };
    walk(plan);
    expect(scans).toHaveLength(1);
    expect(scans[0]!["Index Name"]).toBe(`${month!.part}_tenant_id_event_id_idx`);
    expect(String(scans[0]!["Index Cond"])).toMatch(/event_id =/);
  });
});
