/**
 * A task's workflow (decision 0049), over the real HTTP API on PostgreSQL: `tasks.workflow` is `attrs.workflow` of
 * the first `task.created` event that names one, whichever path made the task row —
 * - events alone, in a small batch (the JSON path) and in a large one (COPY into the staging table);
 * - a checkpoint first, or other events first, and the `task.created` in a later batch;
 * - a later `task.created` naming another workflow changes nothing (the first one wins), in one batch or later ones;
 * - a restored workspace (its task.json carries no workflow: it comes from the restored events);
 * - migration 0032's backfill of rows written before the column;
 * and `GET /api/v1/tasks?workflow=` finds exactly the tasks of a workflow, returns `workflow` on each task, and refuses
 * a name past the workflow limit. A `task.created` whose workflow breaks the limit is rejected naming `attrs.workflow`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase, queryRows, type Db } from "@/db";
import type { TaskList } from "@/lib/contract/api";
import { importWorkspaceBundle } from "@/lib/domain/export/import-workspace";
import { dropDatabase, ensureDatabase, withDatabase } from "../support/env";
import { checkpoint, sendEvents } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, testDbForFile, type TestTenant } from "./helpers";

const handle = testDbForFile();

const created = (taskId: string, workflow?: string) =>
  makeEvent(taskId, { type: "task.created", attrs: workflow === undefined ? {} : { workflow } });

async function workflowOf(db: Db, t: TestTenant, taskId: string): Promise<string | null | undefined> {
  const rows = await queryRows<{ workflow: string | null }>(
    db,
    sql`select workflow from tasks where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
  );
  return rows[0]?.workflow;
}

describe("a task's workflow", () => {
  it("is the first task.created naming one, on every path that makes the task", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const ids = {
      small: newTaskId("wf-small"),
      large: newTaskId("wf-large"),
      checkpointFirst: newTaskId("wf-cp"),
      eventsFirst: newTaskId("wf-ev"),
      twoInOneBatch: newTaskId("wf-two"),
      laterOther: newTaskId("wf-later"),
      none: newTaskId("wf-none"),
    };

    // Events alone, small batch (JSON document).
    await sendEvents(t, [created(ids.small, "document-processing"), makeEvent(ids.small)]);
    // Events alone, a batch large enough for COPY: the task.created is not the first event of its task.
    const many = Array.from({ length: 160 }, () => makeEvent(ids.large));
    many.splice(80, 0, created(ids.large, "bulk-ingest"));
    await sendEvents(t, many);
    // A checkpoint made the row; the task.created comes after.
    await checkpoint(t, ids.checkpointFirst);
    expect(await workflowOf(handle.db, t, ids.checkpointFirst)).toBeNull();
    await sendEvents(t, [created(ids.checkpointFirst, "document-processing")]);
    // Other events made the row; the task.created comes in a later batch.
    await sendEvents(t, [makeEvent(ids.eventsFirst)]);
    expect(await workflowOf(handle.db, t, ids.eventsFirst)).toBeNull();
    await sendEvents(t, [created(ids.eventsFirst, "document-processing")]);
    // In one batch: one without a workflow, then two naming one: the first naming one wins.
    await sendEvents(t, [
      created(ids.twoInOneBatch),
      created(ids.twoInOneBatch, "first-named"),
      created(ids.twoInOneBatch, "second-named"),
    ]);
    // A later task.created naming another workflow changes nothing.
    await sendEvents(t, [created(ids.laterOther, "original")]);
    await sendEvents(t, [created(ids.laterOther, "another")]);
    // No workflow named at all.
    await sendEvents(t, [created(ids.none)]);

    expect(await workflowOf(handle.db, t, ids.small)).toBe("document-processing");
    expect(await workflowOf(handle.db, t, ids.large)).toBe("bulk-ingest");
    expect(await workflowOf(handle.db, t, ids.checkpointFirst)).toBe("document-processing");
    expect(await workflowOf(handle.db, t, ids.eventsFirst)).toBe("document-processing");
    expect(await workflowOf(handle.db, t, ids.twoInOneBatch)).toBe("first-named");
    expect(await workflowOf(handle.db, t, ids.laterOther)).toBe("original");
    expect(await workflowOf(handle.db, t, ids.none)).toBeNull();

    // The list carries it on every task, and ?workflow= finds exactly that workflow's tasks, in either sort.
    const all = await api(t.apiKey).get<TaskList>("/api/v1/tasks?limit=50");
    expect(all.status, all.text).toBe(200);
    const listed = Object.fromEntries(all.body.tasks.map((x) => [x.task_id, x.workflow]));
    expect(listed[ids.small]).toBe("document-processing");
    expect(listed[ids.none]).toBeNull();
    for (const sort of ["activity", "created"]) {
      const res = await api(t.apiKey).get<TaskList>(`/api/v1/tasks?workflow=document-processing&sort=${sort}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.tasks.map((x) => x.task_id).sort()).toEqual(
        [ids.small, ids.checkpointFirst, ids.eventsFirst].sort(),
      );
    }
    // One per page: the cursor keeps the filter.
    const first = await api(t.apiKey).get<TaskList>("/api/v1/tasks?workflow=document-processing&limit=2");
    const rest = await api(t.apiKey).get<TaskList>(
      `/api/v1/tasks?workflow=document-processing&limit=2&cursor=${encodeURIComponent(first.body.next_cursor!)}`,
    );
    expect([...first.body.tasks, ...rest.body.tasks].map((x) => x.task_id).sort()).toEqual(
      [ids.small, ids.checkpointFirst, ids.eventsFirst].sort(),
    );
    expect((await api(t.apiKey).get<TaskList>("/api/v1/tasks?workflow=nothing-here")).body.tasks).toEqual([]);
    // A session sees the same filter, and another workspace's tasks never.
    const owner = await signInAs(t, "owner");
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    await sendEvents(other, [created(newTaskId("wf-other"), "document-processing")]);
    const bySession = await api(owner).get<TaskList>("/api/v1/tasks?workflow=document-processing");
    expect(bySession.body.tasks).toHaveLength(3);

    const tooLong = await api(t.apiKey).get(`/api/v1/tasks?workflow=${"w".repeat(201)}`);
    expectError(tooLong, 400, "bad_request");
    expect(tooLong.text).toContain("workflow");
  });

  it("refuses a task.created whose workflow is past the limit or not text, and stores nothing of it", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("wf-bad");
    for (const workflow of ["w".repeat(201), 42, " padded "]) {
      const res = await postEvents(t.apiKey, [
        makeEvent(taskId, { type: "task.created", attrs: { workflow } as Record<string, unknown> }),
      ]);
      expect(res.status, res.text).toBe(200);
      expect(res.body.results[0]?.status).toBe("rejected");
      expect(JSON.stringify(res.body.results[0]?.error)).toContain("attrs.workflow");
    }
    expect(await workflowOf(handle.db, t, taskId)).toBeUndefined();
  });

  it("is given to rows written before the column by migration 0032's backfill", async () => {
    const t = await createTestTenant(handle.db);
    const named = newTaskId("wf-backfill");
    const unnamed = newTaskId("wf-backfill-none");
    await sendEvents(t, [created(named), makeEvent(named)]);
    await sendEvents(t, [created(named, "backfilled"), created(named, "later")]);
    await sendEvents(t, [created(unnamed)]);
    // As before the column: no workflow on the rows.
    await handle.db.execute(sql`update tasks set workflow = null where tenant_id = ${t.tenantId}`);
    const migration = readFileSync(path.join(process.cwd(), "db/migrations/0032_task_workflow.sql"), "utf8");
    const backfill = migration.split("--> statement-breakpoint").find((s) => /^\s*(--.*\n)*\s*UPDATE/m.test(s));
    expect(backfill, "the migration's UPDATE").toBeDefined();
    await handle.db.execute(sql.raw(backfill!));
    expect(await workflowOf(handle.db, t, named)).toBe("backfilled");
    expect(await workflowOf(handle.db, t, unnamed)).toBeNull();
  });
});

describe("a restored workspace", () => {
  const otherUrl = withDatabase(inject("databaseUrl"), `custody_wf_import_${process.pid}`);
  let other: Awaited<ReturnType<typeof openDatabase>>;

  beforeAll(async () => {
    await dropDatabase(otherUrl).catch(() => {});
    await ensureDatabase(otherUrl);
    other = await openDatabase({ url: otherUrl, max: 2 });
  }, 120_000);

  afterAll(async () => {
    await other?.close();
    await dropDatabase(otherUrl).catch(() => {});
  });

  it("gives its tasks the workflow their task.created events named", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const named = newTaskId("wf-rt");
    const unnamed = newTaskId("wf-rt-none");
    await sendEvents(t, [created(named, "round-trip"), created(unnamed)]);
    const res = await fetch(`${inject("baseUrl")}/api/v1/export`, { headers: { cookie: owner.cookie } });
    expect(res.status).toBe(200);
    const result = await importWorkspaceBundle(other.db, { bundle: new Uint8Array(await res.arrayBuffer()) });
    expect(result.tasks).toBe(2);
    expect(await workflowOf(other.db, t, named)).toBe("round-trip");
    expect(await workflowOf(other.db, t, unnamed)).toBeNull();
  });
});
