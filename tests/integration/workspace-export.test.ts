/**
 * The workspace bundle over the real HTTP API on PostgreSQL (decision 0038): who may export (owners and admins; other
 * roles and runtime keys 403), the range limit (422 naming it), a bundle that the offline verifier passes with every
 * task, map, policy version and the audit chain whole, no password or key hash in it, and a 1,000-task export of some
 * 150 MiB of JSON streamed by a server whose heap is capped at 192 MiB (its resident set sampled during the download).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { queryRows } from "@/db";
import { readBundleArchive } from "@/lib/export/read-archive";
import { verifyBundle } from "@/lib/export/verify";
import { freePort, serverEnv, testServerSecrets } from "../support/env";
import { NextServer } from "../support/next-server";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, signIn, testDbForFile } from "./helpers";

const handle = testDbForFile();

/** The chunks of a streamed answer as they arrive. */
async function* chunksOf(res: Response): AsyncGenerator<Uint8Array> {
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

/** Reads a streamed answer to its end. */
async function download(url: string, cookie: string): Promise<{ status: number; bytes: Uint8Array }> {
  const res = await fetch(url, { headers: { cookie } });
  const chunks: Buffer[] = [];
  for await (const c of chunksOf(res)) chunks.push(Buffer.from(c));
  return { status: res.status, bytes: new Uint8Array(Buffer.concat(chunks)) };
}

describe("GET /api/v1/export", () => {
  it("is for owners and admins: other roles and runtime keys get 403, another workspace's records never appear", async () => {
    const t = await createTestTenant(handle.db);
    for (const role of ["viewer", "responder", "approver"] as const) {
      const res = await api(await signInAs(t, role)).get("/api/v1/export");
      expectError(res, 403, "forbidden");
    }
    expectError(await api(t.apiKey).get("/api/v1/export"), 403, "forbidden");
    expectError(await api().get("/api/v1/export"), 401, "unauthorized");
    const admin = await api(await signInAs(t, "admin")).get("/api/v1/export");
    expect(admin.status).toBe(200);
    expect(admin.headers.get("content-type")).toBe("application/gzip");
  });

  it("refuses a range over 366 days with 422 naming the limit, and a date that is not one with 400", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const res = await api(owner).get("/api/v1/export?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z");
    expectError(res, 422, "export_range_too_large");
    const err = errorOf(res);
    expect(err.details).toEqual({ limit_days: 366, value_days: 731 });
    expect(err.message).toContain("366 days");
    expectError(await api(owner).get("/api/v1/export?from=yesterday"), 400, "bad_request");
    expectError(await api(owner).get("/api/v1/export?from=2026-02-01&to=2026-01-01"), 400, "bad_request");
  });

  it("streams a bundle the offline verifier passes: tasks, maps, policies, settings, members without hashes, the audit chain whole", async () => {
    const t = await createTestTenant(handle.db);
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const taskA = newTaskId("ws-a");
    const taskB = newTaskId("ws:b");
    for (const id of [taskA, taskB]) {
      expect((await postEvents(t.apiKey, [makeEvent(id, { type: "task.created" })])).status).toBe(200);
      await checkpoint(t, id, { phase: "working" });
    }
    const hidden = newTaskId("other");
    await postEvents(other.apiKey, [makeEvent(hidden, { type: "task.created" })]);
    const map = await api(owner).post<{ id: string }>("/api/v1/maps", {
      workflow: "export-flow",
      title: "Export flow",
    });
    expect(map.status, map.text).toBe(200);
    expect((await api(owner).post(`/api/v1/maps/${map.body.id}/publish`, {})).status).toBe(200);

    const { status, bytes } = await download(`${inject("baseUrl")}/api/v1/export`, owner.cookie);
    expect(status).toBe(200);
    const report = await verifyBundle(bytes);
    expect(report.first_failure, JSON.stringify(report.first_failure)).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.check)).toContain("audit chain");

    const files = await readBundleArchive(bytes);
    const manifest = JSON.parse(Buffer.from(files.get("bundle.json")!).toString()) as {
      kind: string;
      tenant_id: string;
      tasks: Array<{ dir: string; task_id: string }>;
    };
    expect(manifest.kind).toBe("workspace");
    expect(manifest.tenant_id).toBe(t.tenantId);
    expect(manifest.tasks.map((x) => x.task_id).sort()).toEqual([taskA, taskB].sort());
    const text = [...files.values()].map((f) => Buffer.from(f).toString()).join("\n");
    expect(text).not.toContain(hidden);
    expect(text).not.toContain("$argon2");
    expect(text).not.toContain("password_hash");
    expect(text).not.toContain("key_hash");
    expect(text).not.toContain(t.apiKey);
    expect(files.has("maps/maps/000001.jsonl")).toBe(true);
    expect(Buffer.from(files.get("maps/maps/000001.jsonl")!).toString()).toContain(map.body.id);
    expect(files.has("maps/versions/000001.jsonl")).toBe(true);
    expect(files.has("settings/approvals.json")).toBe(true);
    const members = Buffer.from(files.get("members/members/000001.jsonl")!).toString().trim().split("\n");
    expect(members).toHaveLength(5);
    const [head] = await queryRows<{ seq: string }>(
      handle.db,
      sql`select seq::text as seq from audit_heads where tenant_id = ${t.tenantId}`,
    );
    const chain = Buffer.from(files.get("audit/entries/000001.jsonl")!).toString().trim().split("\n");
    expect(chain).toHaveLength(Number(head!.seq));
    expect((JSON.parse(chain[0]!) as { seq: number }).seq).toBe(1);
  });
});

describe("a workspace of 1,000 tasks", () => {
  let server: NextServer;
  let cookie: string;
  let tenantId: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-ws-export-"));

  beforeAll(async () => {
    const port = await freePort();
    server = new NextServer({
      root: process.cwd(),
      port,
      // A heap of 192 MiB: the bundle's JSON (some 150 MiB, twice that as JavaScript strings) could never be held whole.
      env: {
        ...serverEnv({ port, databaseUrl: inject("databaseUrl"), ...testServerSecrets() }),
        NODE_OPTIONS: "--max-old-space-size=192",
      },
      logFile: path.join(process.cwd(), "test-results", "workspace-export-server.log"),
    });
    await server.start();
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    tenantId = t.tenantId;
    cookie = await signIn(t.users.owner!.email, t.password, { base: server.baseUrl });
    // 1,000 tasks with three events of about 48 KB each: some 150 MB of JSON, more than the server could hold unseen.
    await handle.db.execute(sql`insert into tasks (tenant_id, task_id)
      select ${tenantId}, 'mem-' || lpad(i::text, 4, '0') from generate_series(1, 1000) i`);
    await handle.db
      .execute(sql`insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, retention_class, attrs)
      select ${tenantId}, 'mem-' || i || '-' || j, 'mem-' || lpad(i::text, 4, '0'), 'session', 'x.bulk', now(), 'history',
             jsonb_build_object('blob', (select string_agg(md5(i::text || ':' || j || ':' || k || random()::text), '')
                                         from generate_series(1, 1500) k))
      from generate_series(1, 1000) i, generate_series(1, 3) j`);
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Resident set of the server process, in bytes (0 once it is gone). */
  function serverRss(): number {
    try {
      const status = fs.readFileSync(`/proc/${server.pid}/status`, "utf8");
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
    } catch {
      return 0;
    }
  }

  it("streams with flat memory, and the verifier passes", async () => {
    const before = serverRss();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, serverRss());
    }, 100);
    const file = path.join(dir, "workspace.tar.gz");
    const out = fs.createWriteStream(file);
    const hash = createHash("sha256");
    let size = 0;
    try {
      const res = await fetch(`${server.baseUrl}/api/v1/export`, { headers: { cookie } });
      expect(res.status).toBe(200);
      for await (const chunk of chunksOf(res)) {
        const b = Buffer.from(chunk);
        size += b.length;
        hash.update(b);
        if (!out.write(b)) await new Promise<void>((r) => out.once("drain", () => r()));
      }
    } finally {
      clearInterval(sampler);
      await new Promise((r) => out.end(r));
    }
    const grown = peak - before;
    console.log(
      `workspace export: ${(size / 2 ** 20).toFixed(1)} MiB streamed; server RSS ${(before / 2 ** 20).toFixed(0)} → peak ${(peak / 2 ** 20).toFixed(0)} MiB`,
    );
    // The archive is some 80 MiB compressed and 150 MiB of JSON: a server with a 192 MiB heap streams it whole, its
    // resident set growing by less than that heap (a page of rows and a 4 MiB part at a time, and their garbage).
    expect(size).toBeGreaterThan(60 * 2 ** 20);
    expect(server.running).toBe(true);
    expect(grown).toBeLessThan(192 * 2 ** 20);

    const report = await verifyBundle(new Uint8Array(fs.readFileSync(file)));
    expect(report.first_failure, JSON.stringify(report.first_failure)).toBeNull();
    const files = await readBundleArchive(fs.readFileSync(file));
    const manifest = JSON.parse(Buffer.from(files.get("bundle.json")!).toString()) as { tasks: unknown[] };
    expect(manifest.tasks).toHaveLength(1000);
  }, 400_000);
});
