/**
 * The committed migrations apply on an empty PostgreSQL database and on PGlite, and the audit log they
 * create refuses UPDATE and DELETE.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase, queryRows, type Db } from "@/db";
import type { CheckpointResult } from "@/lib/contract/api";
import { pgCode } from "@/lib/domain/tx";
import { dropDatabase, ensureDatabase, withDatabase } from "../support/env";
import { api, createTestTenant, makeRecord, newTaskId, openTestDb, rid } from "./helpers";

const TABLES = [
  "tenants",
  "users",
  "memberships",
  "api_keys",
  "tasks",
  "task_checkpoints",
  "events",
  "side_effects",
  "artifacts",
  "audit_log",
];

async function publicTables(db: Db): Promise<string[]> {
  const rows = await queryRows<{ table_name: string }>(
    db,
    sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  return rows.map((r) => r.table_name);
}

async function appliedMigrations(db: Db): Promise<number> {
  const rows = await queryRows<{ n: string | number }>(db, sql`select count(*) as n from drizzle.__drizzle_migrations`);
  return Number(rows[0]!.n);
}

function journalEntries(): number {
  const journal = JSON.parse(fs.readFileSync(path.join(process.cwd(), "db/migrations/meta/_journal.json"), "utf8")) as {
    entries: unknown[];
  };
  return journal.entries.length;
}

describe("migrations", () => {
  it("apply on an empty PostgreSQL database", async () => {
    const url = withDatabase(inject("databaseUrl"), `custody_test_mig_${rid()}`);
    await ensureDatabase(url);
    try {
      const handle = await openDatabase({ url, max: 1 });
      try {
        expect(await publicTables(handle.db)).toEqual(expect.arrayContaining(TABLES));
        expect(await appliedMigrations(handle.db)).toBe(journalEntries());
        // applying again is a no-op
        const again = await openDatabase({ url, max: 1 });
        expect(await appliedMigrations(again.db)).toBe(journalEntries());
        await again.close();
      } finally {
        await handle.close();
      }
    } finally {
      await dropDatabase(url);
    }
  });

  it("apply on PGlite", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-pglite-"));
    try {
      const handle = await openDatabase({ dir });
      try {
        expect(handle.kind).toBe("pglite");
        expect(await publicTables(handle.db)).toEqual(expect.arrayContaining(TABLES));
        expect(await appliedMigrations(handle.db)).toBe(journalEntries());
      } finally {
        await handle.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("audit log", () => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  beforeAll(async () => {
    handle = await openTestDb();
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("refuses UPDATE and DELETE", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const put = await api(t.apiKey).put<CheckpointResult>(`/api/v1/tasks/${taskId}`, makeRecord(taskId));
    expect(put.status).toBe(200);
    const read = () =>
      queryRows<{ seq: number; action: string; hash: string }>(
        handle.db,
        sql`select seq, action, hash from audit_log where tenant_id = ${t.tenantId} order by seq`,
      );
    const before = await read();
    expect(before.map((r) => r.action)).toContain("task.checkpointed");

    for (const statement of [
      sql`update audit_log set action = 'tampered' where tenant_id = ${t.tenantId}`,
      sql`delete from audit_log where tenant_id = ${t.tenantId}`,
    ]) {
      const err = await handle.db.execute(statement).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, "the statement must fail").not.toBeNull();
      expect(pgCode(err)).toBe("42501");
      expect(String((err as { cause?: { message?: string } }).cause?.message)).toMatch(/append-only/);
    }
    expect(await read()).toEqual(before);
  });
});
