/**
 * A database that goes away under the server, over the real HTTP API on PostgreSQL. The test starts its own
 * `npm start` of the build whose connections carry their own application name and pass through a TCP relay the test
 * controls, so it can end exactly those connections:
 * - `pg_terminate_backend` on the server's backends while runtimes send event batches and read tasks: every answer
 *   is 2xx, or 503 `database_unavailable` with `Retry-After`; every acknowledged event is stored, a refused batch is
 *   stored whole or not at all, and sending it again completes it;
 * - the database unreachable (the relay closed): `/api/health` and API routes answer 503 `database_unavailable`
 *   with `Retry-After`, and both recover once it is back;
 * - statements that failed while the database was unreachable leave the driver's pool whole: every client connection
 *   serves again once it is back.
 */
import { within } from "../support/within";
import net from "node:net";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectionErrorCode, openDatabase, queryRows } from "@/db";
import type { EventResult } from "@/lib/contract/api";
import { freePort, serverEnv, testServerSecrets } from "../support/env";
import { NextServer } from "../support/next-server";
import { createTestTenant, makeEvent, newTaskId, rid, testDbForFile, type TestTenant } from "./helpers";

const handle = testDbForFile();

/** A TCP relay to the suite's PostgreSQL that can be shut (every connection cut, new ones refused) and reopened. */
class Relay {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.server = server;
  }

  async shut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

type Answer = { status: number; retryAfter: string | null; code: string | null; body: unknown; error?: string };

let relay: Relay;
/** The suite's database URL through the relay. */
let relayedUrl: string;
let server: NextServer;
let tenant: TestTenant;
const appName = `custody-kill-${rid(4)}`;

/** One request to the test's server; a request that gets no HTTP answer is recorded with `status: 0`. */
async function send(method: string, urlPath: string, json?: unknown): Promise<Answer> {
  try {
    const res = await fetch(`${server.baseUrl}${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${tenant.apiKey}`,
        ...(json === undefined ? {} : { "content-type": "application/json" }),
      },
      body: json === undefined ? undefined : JSON.stringify(json),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    const code = (body as { error?: { code?: string } } | null)?.error?.code ?? null;
    return { status: res.status, retryAfter: res.headers.get("retry-after"), code, body };
  } catch (err) {
    return { status: 0, retryAfter: null, code: null, body: null, error: String(err) };
  }
}

/** Ends every backend of the test's server; returns how many. */
async function terminateServerBackends(): Promise<number> {
  const rows = await queryRows<{ ended: boolean }>(
    handle.db,
    sql`select pg_terminate_backend(pid) as ended from pg_stat_activity
        where application_name = ${appName} and pid <> pg_backend_pid()`,
  );
  return rows.filter((r) => r.ended).length;
}

async function storedIds(ids: string[]): Promise<Set<string>> {
  const rows = await queryRows<{ id: string }>(
    handle.db,
    sql`select event_id as id from events where tenant_id = ${tenant.tenantId} and event_id in ${ids}`,
  );
  return new Set(rows.map((r) => r.id));
}

/** What an answer under a lost database may be: a success, or 503 database_unavailable with a Retry-After. */
function badAnswer(a: Answer): string | null {
  if (a.status >= 200 && a.status < 300) return null;
  if (a.status === 503 && a.code === "database_unavailable" && Number(a.retryAfter) >= 1) return null;
  return `${a.status} ${a.code ?? ""} retry-after=${a.retryAfter} ${a.error ?? JSON.stringify(a.body).slice(0, 300)}`;
}

beforeAll(async () => {
  const databaseUrl = new URL(inject("databaseUrl"));
  relay = new Relay(await freePort(), { host: databaseUrl.hostname, port: Number(databaseUrl.port || 5432) });
  await relay.open();
  const relayed = new URL(databaseUrl);
  relayed.hostname = "127.0.0.1";
  relayed.port = String(relay.port);
  relayedUrl = relayed.toString();
  const port = await freePort();
  server = new NextServer({
    root: process.cwd(),
    port,
    // PGAPPNAME names the server's connections (postgres.js reads it), so the test ends only those.
    env: { ...serverEnv({ port, databaseUrl: relayed.toString(), ...testServerSecrets() }), PGAPPNAME: appName },
    logFile: path.join(process.cwd(), "test-results", "database-unavailable-server.log"),
  });
  await server.start();
  tenant = await createTestTenant(handle.db, { roles: ["viewer"] });
});

afterAll(async () => {
  await server?.stop();
  await relay?.shut();
});

describe("a database that goes away under the server", () => {
  it("answers in-flight requests 2xx or 503 with Retry-After while its connections are killed; nothing acknowledged is missing", async () => {
    const SENDERS = 4;
    const BATCH = 25;
    const RUN_MS = 6_000;
    const batches: Array<{ ids: string[]; events: ReturnType<typeof makeEvent>[]; answer: Answer }> = [];
    const reads: Answer[] = [];
    const stopAt = Date.now() + RUN_MS;
    let killed = 0;

    const sender = async () => {
      const taskId = newTaskId("kill");
      while (Date.now() < stopAt) {
        const events = Array.from({ length: BATCH }, () => makeEvent(taskId));
        const answer = await send("POST", "/api/v1/events", { events });
        batches.push({ ids: events.map((e) => e.id), events, answer });
      }
    };
    const reader = async () => {
      while (Date.now() < stopAt) reads.push(await send("GET", "/api/v1/tasks?limit=5"));
    };
    const killer = async () => {
      // Let the first requests start, then end the server's backends again and again while they run.
      await new Promise((r) => setTimeout(r, 300));
      while (Date.now() < stopAt - 500) {
        killed += await terminateServerBackends();
        await new Promise((r) => setTimeout(r, 80 + Math.random() * 120));
      }
    };
    await Promise.all([...Array.from({ length: SENDERS }, sender), reader(), killer()]);

    expect(killed).toBeGreaterThan(0);
    const answers = [...batches.map((b) => b.answer), ...reads];
    expect(answers.map(badAnswer).filter(Boolean)).toEqual([]);
    const refused = batches.filter((b) => b.answer.status === 503);
    // The kills reached requests in flight (else this test would show nothing).
    expect(refused.length + reads.filter((r) => r.status === 503).length).toBeGreaterThan(0);

    // Every acknowledged event is stored.
    const acked = batches.filter((b) => b.answer.status === 200);
    expect(acked.length).toBeGreaterThan(0);
    for (const b of acked) {
      const results = (b.answer.body as { results: EventResult[] }).results;
      expect(results.map((r) => r.status)).toEqual(b.ids.map(() => "stored"));
    }
    const ackedIds = acked.flatMap((b) => b.ids);
    expect((await storedIds(ackedIds)).size).toBe(ackedIds.length);

    // A refused batch is one transaction: stored whole (the commit went through, its answer did not) or not at all.
    for (const b of refused) expect([0, BATCH]).toContain((await storedIds(b.ids)).size);

    // Sent again once the database is back, each refused batch completes: stored, or duplicate where it had been.
    for (const b of refused) {
      const again = await send("POST", "/api/v1/events", { events: b.events });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      const statuses = (again.body as { results: EventResult[] }).results.map((r) => r.status);
      expect(new Set(statuses).size, statuses.join(",")).toBe(1);
      expect(["stored", "duplicate"]).toContain(statuses[0]);
    }
    const allIds = batches.flatMap((b) => b.ids);
    expect((await storedIds(allIds)).size).toBe(allIds.length);
    expect((await send("GET", "/api/health")).status).toBe(200);
  });

  it("answers /api/health and API routes 503 database_unavailable with Retry-After while it is unreachable, and recovers", async () => {
    await relay.shut();
    try {
      const health = await send("GET", "/api/health");
      expect(health.status, JSON.stringify(health.body)).toBe(503);
      expect(health.body).toMatchObject({ ok: false, error: { code: "database_unavailable" } });
      expect(Number(health.retryAfter)).toBeGreaterThanOrEqual(1);
      const taskId = newTaskId("unreachable");
      for (const a of [
        await send("POST", "/api/v1/events", { events: [makeEvent(taskId)] }),
        await send("GET", "/api/v1/tasks"),
      ]) {
        expect(badAnswer(a)).toBeNull();
        expect(a.status).toBe(503);
      }
    } finally {
      await relay.open();
    }
    const deadline = Date.now() + 20_000;
    let health = await send("GET", "/api/health");
    while (health.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      health = await send("GET", "/api/health");
    }
    expect(health.status).toBe(200);
    const back = await send("POST", "/api/v1/events", { events: [makeEvent(newTaskId("back"))] });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
  });

  it("keeps every client connection in the pool after statements failed while the database was unreachable", async () => {
    // A statement that waits for a connection the driver could not open fails with it (503). The driver must then
    // forget that wait: handed a connection later, it would take it out of the pool for good.
    const CONNECTIONS = 3;
    const client = await openDatabase({ url: relayedUrl, max: CONNECTIONS });
    const walled = client.scoped({ tenantId: tenant.tenantId });
    try {
      await queryRows(walled, sql`select count(*) from tasks`);
      await relay.shut();
      let failed: unknown[];
      try {
        failed = await Promise.all(
          Array.from({ length: CONNECTIONS }, () =>
            queryRows(walled, sql`select count(*) from tasks`).then(
              () => "answered",
              (err: unknown) => err,
            ),
          ),
        );
      } finally {
        await relay.open();
      }
      expect(failed.map((err) => connectionErrorCode(err) !== null)).toEqual(failed.map(() => true));
      // Transactions that each wait for all the others to have started finish only if every connection takes one.
      let started = 0;
      let allStarted!: () => void;
      const all = new Promise<void>((resolve) => (allStarted = resolve));
      const together = Promise.all(
        Array.from({ length: CONNECTIONS }, () =>
          walled.transaction(async (tx) => {
            await tx.execute(sql`select count(*) from tasks`);
            if (++started === CONNECTIONS) allStarted();
            await all;
          }),
        ),
      ).then(() => "done");
      expect(await within(together, 20_000, "stuck"), `${started} of ${CONNECTIONS} transactions started`).toBe("done");
    } finally {
      await client.close();
    }
  }, 60_000);
});
