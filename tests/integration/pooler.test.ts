/**
 * Through a connection pooler (docs/decisions/0051-through-a-connection-pooler.md): a built server with
 * `DATABASE_POOLER=transaction` behind PgBouncer 1.18 in transaction pooling mode (Debian's package, installed when
 * missing; scripts/pgbouncer.sh) with only two server connections, which every transaction of the server and of this
 * file shares, so consecutive transactions of one client connection land on different server connections:
 *   - racing intents still get exactly one `go` per key, every other racer `409 in_flight`, and nothing answers 500
 *     (a statement prepared by name on one server connection and used on another would);
 *   - tenant walls hold across the pooled connections: two tenants interleaved never see each other's rows, through
 *     the server and through the walled database, and nothing of a transaction's scope (role, tenant) is left on a
 *     server connection for the next transaction;
 *   - a transaction whose server connection is killed mid-way leaves no partial write, and the server goes on
 *     serving through the pooler;
 *   - migrations through the pooler: two processes migrating one new database at once apply each migration once;
 *   - more queries than client connections, with and without parameters and in transactions, are all answered (a
 *     query pipelined behind an autocommit statement would lose its answers to PgBouncer 1.18 and wait for good);
 *   - server connections killed again and again under load: every statement and transaction settles (done, or failed
 *     as a lost connection), and every client connection serves again afterwards.
 * The direct URL is `TEST_DATABASE_DIRECT_URL` when the suite itself runs through a pooler, else the suite's.
 */
import { LATE, within } from "../support/within";
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectionErrorCode, openDatabase, queryRows, type Db } from "@/db";
import { RESERVE_TIMEOUT } from "@/db/connection-errors";
import { MIGRATIONS_DIR } from "@/db/paths";
import type { CheckpointResult, IntentResult, TaskView } from "@/lib/contract/api";
import { dropDatabase, ensureDatabase, freePort, serverEnv, testServerSecrets, withDatabase } from "../support/env";
import { NextServer } from "../support/next-server";
import { startPgBouncer, type Pooler } from "../support/pgbouncer";
import { hex, intentBody, newKey } from "./support/custody-calls";
import { api, createTestTenant, makeRecord, newTaskId, rid, type TestTenant } from "./helpers";

type Handle = Awaited<ReturnType<typeof openDatabase>>;

const directUrl = process.env.TEST_DATABASE_DIRECT_URL || inject("databaseUrl");
/** Server connections PgBouncer keeps per database and user: fewer than the server's and this file's clients. */
const POOL_SIZE = 2;

let pooler: Pooler;
let server: NextServer;
let direct: Handle;
let pooled: Handle;

beforeAll(async () => {
  pooler = startPgBouncer({ upstream: directUrl, port: await freePort(), poolSize: POOL_SIZE });
  direct = await openDatabase({ url: directUrl, pooler: "none", max: 2 });
  pooled = await openDatabase({ url: pooler.url, pooler: "transaction", max: 8 });
  const port = await freePort();
  const root = process.cwd();
  server = new NextServer({
    root,
    port,
    env: { ...serverEnv({ port, databaseUrl: pooler.url, ...testServerSecrets() }), DATABASE_POOLER: "transaction" },
    logFile: path.join(root, "test-results", "pooler-server.log"),
    healthTimeoutMs: 90_000,
  });
  await server.start();
});

afterAll(async () => {
  await server?.stop();
  await pooled?.close();
  await direct?.close();
  pooler?.stop();
});

const call = (t: TestTenant) => api(t.apiKey, server.baseUrl);

async function checkpointThrough(t: TestTenant, taskId: string): Promise<void> {
  const res = await call(t).put<CheckpointResult>(`/api/v1/tasks/${encodeURIComponent(taskId)}`, makeRecord(taskId));
  expect(res.status, res.text).toBe(200);
}

describe("a server through PgBouncer in transaction pooling mode", () => {
  it("gives racing intents exactly one go per key, and answers nothing with 500", async () => {
    const t = await createTestTenant(direct.db, { roles: [] });
    const taskId = newTaskId();
    await checkpointThrough(t, taskId);
    const keys = Array.from({ length: 4 }, () => newKey("pooled"));
    const racers = keys.flatMap((key) =>
      Array.from({ length: 8 }, () =>
        call(t).post<IntentResult>(
          `/api/v1/tasks/${encodeURIComponent(taskId)}/side-effects/update_record_${keys.indexOf(key)}/intent`,
          intentBody(key, { payload_digest: hex("abcd"[keys.indexOf(key)]!) }),
        ),
      ),
    );
    const answers = await Promise.all(racers);
    for (const [i, key] of keys.entries()) {
      const mine = answers.slice(i * 8, i * 8 + 8);
      const statuses = mine.map((r) => (r.status === 200 ? (r.body as { decision: string }).decision : r.status));
      expect(
        statuses.filter((s) => s === "go"),
        `${key}: ${JSON.stringify(statuses)}`,
      ).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(7);
      for (const r of mine.filter((x) => x.status === 409)) {
        expect((r.body as unknown as { error: { code: string } }).error.code).toBe("in_flight");
      }
    }
    const stored = await queryRows<{ n: number }>(
      direct.db,
      sql`select count(*)::int as n from side_effects where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(stored[0]!.n).toBe(keys.length);
  });

  it("keeps two tenants interleaved on two server connections inside their walls", async () => {
    const [a, b] = [await createTestTenant(direct.db, { roles: [] }), await createTestTenant(direct.db, { roles: [] })];
    const tasksOf = new Map<string, string[]>([
      [a.tenantId, Array.from({ length: 6 }, () => newTaskId())],
      [b.tenantId, Array.from({ length: 6 }, () => newTaskId())],
    ]);
    // Both tenants' checkpoints interleaved through the server.
    await Promise.all(
      [0, 1, 2, 3, 4, 5].flatMap((i) => [
        checkpointThrough(a, tasksOf.get(a.tenantId)![i]!),
        checkpointThrough(b, tasksOf.get(b.tenantId)![i]!),
      ]),
    );
    // Each reads its own tasks and is refused the other's, all at once.
    const reads = await Promise.all(
      [0, 1, 2, 3, 4, 5].flatMap((i) => [
        call(a).get<TaskView>(`/api/v1/tasks/${encodeURIComponent(tasksOf.get(a.tenantId)![i]!)}`),
        call(b).get<TaskView>(`/api/v1/tasks/${encodeURIComponent(tasksOf.get(a.tenantId)![i]!)}`),
        call(b).get<TaskView>(`/api/v1/tasks/${encodeURIComponent(tasksOf.get(b.tenantId)![i]!)}`),
        call(a).get<TaskView>(`/api/v1/tasks/${encodeURIComponent(tasksOf.get(b.tenantId)![i]!)}`),
      ]),
    );
    expect(reads.map((r) => r.status)).toEqual([0, 1, 2, 3, 4, 5].flatMap(() => [200, 404, 200, 404]));

    // The walled database through the pooler: scoped reads of both tenants and the owner's statements interleaved on
    // the same two server connections. A walled read sees its own tenant's rows only; the owner's statements find no
    // role or tenant left behind by the transaction before them on that server connection.
    const walled = (tenantId: string) =>
      queryRows<{ tenant_id: string; task_id: string; pid: number }>(
        pooled.scoped({ tenantId }),
        sql`select tenant_id, task_id, pg_backend_pid() as pid from tasks order by task_id`,
      ).then((rows) => ({ tenantId, rows }));
    const owner = () =>
      queryRows<{ who: string; tenant: string | null; role: string }>(
        pooled.db,
        sql`select current_user as who, current_setting('app.tenant_id', true) as tenant, current_setting('role') as role`,
      );
    const serverConnections = new Set<number>();
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 3 === 2 ? owner() : walled(i % 3 === 0 ? a.tenantId : b.tenantId))),
    );
    for (const run of runs) {
      if (Array.isArray(run)) {
        expect(run[0]!.role).toBe("none");
        expect(run[0]!.tenant ?? "").toBe("");
        continue;
      }
      expect(run.rows.map((r) => r.task_id)).toEqual([...tasksOf.get(run.tenantId)!].sort());
      expect(new Set(run.rows.map((r) => r.tenant_id))).toEqual(new Set([run.tenantId]));
      serverConnections.add(run.rows[0]!.pid);
    }
    // Fourteen walled transactions from eight client connections ran on at most two server connections.
    expect(serverConnections.size).toBeLessThanOrEqual(POOL_SIZE);
  });

  it("answers every query when more wait than there are client connections: statements without parameters, with parameters, and transactions mixed", async () => {
    // postgres.js sends a query behind one still unanswered on the same connection (pipelining). PgBouncer 1.18 gives
    // the server connection back at the first ReadyForQuery outside a transaction and drops the answers behind it, so
    // a pipelined client waits for good; the pooled client takes one query per connection at a time (db/driver.ts).
    const t = await createTestTenant(direct.db, { roles: [] });
    const work = Array.from({ length: 240 }, (_, i) =>
      i % 4 === 0
        ? queryRows<{ n: number }>(pooled.db, sql.raw("select 1 as n")).then((r) => Number(r[0]!.n))
        : i % 4 === 1
          ? queryRows<{ n: number }>(pooled.db, sql`select ${i}::int as n`).then((r) => Number(r[0]!.n))
          : i % 4 === 2
            ? pooled.db.transaction(async (tx) => {
                const [row] = await queryRows<{ n: number }>(tx, sql`select ${i}::int as n`);
                await tx.execute(sql.raw("select 1"));
                return Number(row!.n);
              })
            : queryRows<{ n: number }>(
                pooled.scoped({ tenantId: t.tenantId }),
                sql`select count(*)::int + ${i}::int as n from tasks`,
              ).then((r) => Number(r[0]!.n)),
    );
    const answers = await within(Promise.all(work), 30_000, "still unanswered after 30 s");
    expect(answers, "the queries through the pooler").toEqual(
      Array.from({ length: 240 }, (_, i) => (i % 4 === 0 ? 1 : i)),
    );
  });

  it("leaves no partial write of a transaction whose server connection is killed mid-way, and serves on", async () => {
    const t = await createTestTenant(direct.db, { roles: [] });
    const [first, second] = [newTaskId(), newTaskId()];
    const outcome = await pooled
      .scoped({ tenantId: t.tenantId })
      .transaction(async (tx) => {
        await tx.execute(sql`insert into tasks (tenant_id, task_id) values (${t.tenantId}, ${first})`);
        const [me] = await queryRows<{ pid: number }>(tx as unknown as Db, sql`select pg_backend_pid() as pid`);
        await queryRows(direct.db, sql`select pg_terminate_backend(${me!.pid})`);
        await tx.execute(sql`insert into tasks (tenant_id, task_id) values (${t.tenantId}, ${second})`);
      })
      .then(
        () => "committed",
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
    expect(outcome).not.toBe("committed");
    const left = await queryRows<{ n: number }>(
      direct.db,
      sql`select count(*)::int as n from tasks where tenant_id = ${t.tenantId} and task_id in (${first}, ${second})`,
    );
    expect(left[0]!.n).toBe(0);
    // PgBouncer replaces the lost server connection: the server and the walled database go on through it.
    await checkpointThrough(t, newTaskId());
    const mine = await queryRows<{ n: number }>(
      pooled.scoped({ tenantId: t.tenantId }),
      sql`select count(*)::int as n from tasks`,
    );
    expect(mine[0]!.n).toBe(1);
  });

  it("settles every statement and transaction while server connections are killed under load, and every client connection serves again", async () => {
    // With one query per connection at a time (db/driver.ts), a transaction's own rollback sent after its connection
    // was lost used to park that closed connection in the pool's `full` queue for good, until no connection was left; and a
    // waiting reservation handed to a connection that was reconnecting was dropped, so it waited until its timeout.
    const appName = `custody-pooled-kill-${rid(4)}`;
    const url = new URL(pooler.url);
    url.searchParams.set("application_name", appName);
    const victim = await openDatabase({ url: url.toString(), pooler: "transaction", max: 2 });
    /** `run`'s outcome: "ok", "lost:<code>" (a lost connection, which the API answers 503), "hung" after 15 s, or the error. */
    const settle = (run: Promise<unknown>): Promise<string> =>
      within(
        run.then(
          () => "ok",
          (err: unknown) =>
            connectionErrorCode(err) !== null ? "lost:" + connectionErrorCode(err) : `error: ${String(err)}`,
        ),
        15_000,
        "hung",
      );
    try {
      const t = await createTestTenant(direct.db, { roles: [] });
      const walled = victim.scoped({ tenantId: t.tenantId });
      const stopAt = Date.now() + 4_000;
      const outcomes: string[] = [];
      let killed = 0;
      const worker = async (w: number) => {
        for (let i = w; Date.now() < stopAt; i++) {
          outcomes.push(
            await settle(
              i % 2
                ? queryRows(walled, sql`select pg_sleep(0.005), count(*) from tasks`)
                : walled.transaction(async (tx) => {
                    await tx.execute(sql`select count(*) from tasks`);
                    await tx.execute(sql`select pg_sleep(0.005)`);
                    await tx.execute(sql`select count(*) from tasks`);
                  }),
            ),
          );
        }
      };
      const killer = async () => {
        await new Promise((r) => setTimeout(r, 200));
        while (Date.now() < stopAt - 300) {
          const ended = await queryRows<{ ended: boolean }>(
            direct.db,
            sql`select pg_terminate_backend(pid) as ended from pg_stat_activity
                where application_name = ${appName} and pid <> pg_backend_pid()`,
          );
          killed += ended.filter((r) => r.ended).length;
          await new Promise((r) => setTimeout(r, 60 + Math.random() * 100));
        }
      };
      await Promise.all([killer(), ...Array.from({ length: 8 }, (_, w) => worker(w))]);
      expect(killed).toBeGreaterThan(0);
      // A statement may fail with its connection; none may wait out the wait for a connection (RESERVE_TIMEOUT), which
      // a reservation handed to a reconnecting connection and then dropped used to do.
      expect(outcomes.filter((o) => o !== "ok" && (!o.startsWith("lost:") || o === `lost:${RESERVE_TIMEOUT}`))).toEqual(
        [],
      );
      expect(outcomes.filter((o) => o.startsWith("lost:")).length).toBeGreaterThan(0);
      // After the storm, both client connections must be free: two transactions that each wait for the other to
      // have started can only finish when both connections take one.
      let started = 0;
      let bothStarted!: () => void;
      const both = new Promise<void>((resolve) => (bothStarted = resolve));
      const after = await Promise.all(
        Array.from({ length: 2 }, () =>
          settle(
            walled.transaction(async (tx) => {
              await tx.execute(sql`select count(*) from tasks`);
              if (++started === 2) bothStarted();
              await both;
              await tx.execute(sql`select count(*) from tasks`);
            }),
          ),
        ),
      );
      expect(after).toEqual(["ok", "ok"]);
    } finally {
      expect(await within(victim.close(), 10_000, LATE), "closing the client").not.toBe(LATE);
    }
  });

  it("applies each migration once when two processes migrate a new database through it at once", async () => {
    const name = `custody_pooled_${rid()}`;
    await ensureDatabase(withDatabase(directUrl, name));
    try {
      const url = pooler.urlFor(name);
      const both = await Promise.all([
        openDatabase({ url, pooler: "transaction", max: 1 }),
        openDatabase({ url, pooler: "transaction", max: 1 }),
      ]);
      await Promise.all(both.map((h) => h.close()));
      const files = fs.readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith(".sql")).length;
      const check = await openDatabase({ url: withDatabase(directUrl, name), pooler: "none", max: 1 });
      try {
        const applied = await queryRows<{ n: number; hashes: number }>(
          check.db,
          sql`select count(*)::int as n, count(distinct hash)::int as hashes from drizzle.__drizzle_migrations`,
        );
        expect(applied[0]).toEqual({ n: files, hashes: files });
      } finally {
        await check.close();
      }
    } finally {
      await dropDatabase(withDatabase(directUrl, name));
    }
  });
});
