/**
 * Several servers, one truth: three production servers (`npm start` of the same build, the same signing key and
 * session secret) behind HAProxy (round robin, Debian's package, installed when missing), one PostgreSQL. Racing
 * runtimes, approvers and responders spread over the servers; the database decides, so
 *   - the same intent from 8 runtimes over the 3 servers gets exactly one `go`;
 *   - receipts racing over the servers store one receipt; reconciles racing over them store one decision;
 *   - two approvers deciding one approval on different servers: one wins;
 *   - right after a change made through one server, every server's gate answers from it (no per-process cache answers
 *     from stale facts: a checkpoint row changed in the database stops the gate on every server);
 *   - the arrival feed the live pages poll (every 3 s) shows on every server an event reported through another;
 *   - a person's session works on every server and ends on every server at sign-out.
 * The balancer's own address is used where it does not matter which server answers; each server's address where the
 * test must know (the gate on every server, the session on every server).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { queryRows } from "@/db";
import type { GateVerdict } from "@/lib/contract/api";
import { freePort, serverCommand, serverEnv, testServerSecrets } from "../support/env";
import { seedApproval } from "../support/approvals";
import { hex, intentBody, newKey, receiptBody } from "./support/custody-calls";
import { unknownEffect } from "./support/seeding";
import {
  api,
  createTestTenant,
  makeEvent,
  makeRecord,
  newTaskId,
  signIn,
  signOut,
  testDbForFile,
  type FullTestTenant,
} from "./helpers";

const handle = testDbForFile();
const SERVERS = 3;

type Started = { child: ChildProcess; url: string; log?: string };
const started: Started[] = [];
let balancer: Started | null = null;
let lb = "";
let servers: string[] = [];
let signingKeyPem = "";
let t: FullTestTenant;

async function waitFor(url: string, child: ChildProcess, what: string, log?: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${what} exited with ${child.exitCode}: ${log ? fs.readFileSync(log, "utf8").slice(-2000) : ""}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(3000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${what} did not answer 200 at ${url}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

function stop(s: Started): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => s.child.once("exit", () => resolve()));
  try {
    process.kill(-s.child.pid!, "SIGTERM");
  } catch {
    return Promise.resolve();
  }
  return exited;
}

/** HAProxy from Debian's package: found, or installed with apt-get (the test needs root or sudo for that). */
function haproxyBinary(): string {
  const found = spawnSync("sh", ["-c", "command -v haproxy || ls /usr/sbin/haproxy"], { encoding: "utf8" });
  if (found.status === 0 && found.stdout.trim()) return found.stdout.trim().split("\n")[0]!;
  const sudo = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const install = spawnSync(
    sudo[0] ?? "apt-get",
    [
      ...sudo.slice(1),
      ...(sudo.length ? ["apt-get"] : []),
      "install",
      "-y",
      "-q",
      "--no-install-recommends",
      "haproxy",
    ],
    { encoding: "utf8", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } },
  );
  if (install.status !== 0) throw new Error(`haproxy is missing and apt-get install haproxy failed: ${install.stderr}`);
  return "/usr/sbin/haproxy";
}

beforeAll(async () => {
  const haproxy = haproxyBinary();
  const secrets = testServerSecrets();
  signingKeyPem = secrets.signingKeyPem;
  const lbPort = await freePort();
  lb = `http://localhost:${lbPort}`;
  const root = process.cwd();
  const ports = new Set<number>([lbPort]);
  while (ports.size < SERVERS + 1) ports.add(await freePort());
  fs.mkdirSync(path.join(root, "test-results"), { recursive: true });
  for (const [i, port] of [...ports].slice(1).entries()) {
    const log = path.join(root, "test-results", `several-servers-${i + 1}.log`);
    const out = fs.openSync(log, "w");
    const start = serverCommand(root, port);
    const child = spawn(start.command, start.args, {
      cwd: root,
      // Every server is reached under the balancer's address (next-auth's NEXTAUTH_URL).
      env: {
        ...serverEnv({ port, databaseUrl: inject("databaseUrl"), ...secrets }),
        NEXTAUTH_URL: lb,
      },
      stdio: ["ignore", out, out],
      detached: true,
    });
    fs.closeSync(out);
    started.push({ child, url: `http://localhost:${port}`, log });
  }
  servers = started.map((s) => s.url);
  await Promise.all(started.map((s, i) => waitFor(`${s.url}/api/health`, s.child, `server ${i + 1}`, s.log)));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-haproxy-"));
  const config = [
    "global",
    "  maxconn 512",
    "defaults",
    "  mode http",
    "  timeout connect 5s",
    "  timeout client 60s",
    "  timeout server 60s",
    "frontend custody",
    `  bind 127.0.0.1:${lbPort}`,
    "  default_backend servers",
    "backend servers",
    "  balance roundrobin",
    "  http-response set-header X-Served-By %s",
    ...started.map((s, i) => `  server s${i + 1} ${new URL(s.url).host.replace("localhost", "127.0.0.1")}`),
    "",
  ].join("\n");
  fs.writeFileSync(path.join(dir, "haproxy.cfg"), config);
  const child = spawn(haproxy, ["-db", "-f", path.join(dir, "haproxy.cfg")], { stdio: "ignore", detached: true });
  balancer = { child, url: lb };
  await waitFor(`${lb}/api/health`, child, "haproxy");
  t = await createTestTenant(handle.db);
}, 240_000);

afterAll(async () => {
  if (balancer) await stop(balancer);
  await Promise.all(started.map(stop));
});

const effectPath = (taskId: string, name: string, verb: string) =>
  `/api/v1/tasks/${encodeURIComponent(taskId)}/side-effects/${encodeURIComponent(name)}/${verb}`;

async function checkpointed(over: Parameters<typeof makeRecord>[1] = {}): Promise<string> {
  const taskId = newTaskId("multi");
  const res = await api(t.apiKey, lb).put(`/api/v1/tasks/${taskId}`, makeRecord(taskId, over));
  expect(res.status, res.text).toBe(200);
  return taskId;
}

describe("several servers behind a load balancer, one PostgreSQL", () => {
  it("the balancer spreads requests over every server", async () => {
    const servedBy = new Set<string>();
    for (let i = 0; i < 9; i++) {
      const res = await fetch(`${lb}/api/health`);
      expect(res.status).toBe(200);
      servedBy.add(res.headers.get("x-served-by") ?? "");
    }
    expect([...servedBy].sort()).toEqual(["s1", "s2", "s3"]);
  });

  it("the same intent from 8 runtimes across the 3 servers: exactly one go per key", async () => {
    const taskId = await checkpointed({ side_effects: {} });
    for (let round = 0; round < 5; round++) {
      const key = newKey("multi");
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api(t.apiKey, servers[i % SERVERS]).post<{ decision?: string }>(
            effectPath(taskId, `write_${round}`, "intent"),
            intentBody(key, { payload_digest: createHash("sha256").update(key).digest("hex") }),
          ),
        ),
      );
      const answered = answers.map((a) => `${a.status} ${a.text.slice(0, 160)}`).join("\n");
      expect(
        answers.filter((a) => a.status === 200 && a.body.decision === "go"),
        answered,
      ).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409)).toHaveLength(7);
    }
    const [row] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from side_effects where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(row!.n).toBe(5);
  });

  it("receipts racing across the servers store one receipt; the others are told which", async () => {
    const taskId = await checkpointed({ side_effects: {} });
    const key = newKey("receipt");
    const go = await api(t.apiKey, servers[0]).post<{ decision: string }>(
      effectPath(taskId, "write", "intent"),
      intentBody(key),
    );
    expect(go.body.decision).toBe("go");
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api(t.apiKey, servers[i % SERVERS]).post(
          effectPath(taskId, "write", "receipt"),
          receiptBody(key, { external_operation_id: `op-${i}`, result_digest: hex(String(i)) }),
        ),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(5);
    const rows = await queryRows<{ op: string }>(
      handle.db,
      sql`select receipt->>'external_operation_id' as op from side_effects
          where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = 'write'`,
    );
    expect(rows).toHaveLength(1);
    const winner = answers.findIndex((a) => a.status === 200);
    expect(rows[0]!.op).toBe(`op-${winner}`);
  });

  it("reconciles racing across the servers store one decision", async () => {
    const { taskId, name } = await unknownEffect(handle.db, t);
    const responder = { cookie: await signIn(t.users.responder.email, t.password, { base: lb }) };
    const bodies = [
      { outcome: "completed", external_operation_id: "op-a", evidence: "Found under the key in the records system." },
      { outcome: "not_applied", evidence: "Nothing under the key in the records system." },
      { outcome: "completed", external_operation_id: "op-c", evidence: "Found under the key, other operation." },
    ];
    const answers = await Promise.all(
      bodies.map((b, i) => api(responder, servers[i % SERVERS]).post(effectPath(taskId, name, "reconcile"), b)),
    );
    expect(
      answers.filter((a) => a.status === 200),
      answers.map((a) => `${a.status} ${a.text}`).join("\n"),
    ).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(2);
    const audit = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from audit_log where tenant_id = ${t.tenantId}
          and target = ${`side_effect:${taskId}/${name}`} and action like '%reconcile%'`,
    );
    expect(audit[0]!.n).toBe(1);
  });

  it("two approvers deciding one approval on different servers: one wins", async () => {
    const taskId = await checkpointed({ side_effects: {} });
    const approvalId = await seedApproval(handle.db, t, taskId, signingKeyPem, { approve: false, stale: false });
    const approver = { cookie: await signIn(t.users.approver.email, t.password, { base: servers[0] }) };
    const owner = { cookie: await signIn(t.users.owner.email, t.password, { base: servers[1] }) };
    const answers = await Promise.all([
      api(approver, servers[0]).post(`/api/v1/approvals/${approvalId}/decision`, { decision: "approve" }),
      api(owner, servers[1]).post(`/api/v1/approvals/${approvalId}/decision`, {
        decision: "reject",
        reason: "not now",
      }),
      api(approver, servers[2]).post(`/api/v1/approvals/${approvalId}/decision`, { decision: "reject", reason: "no" }),
    ]);
    expect(
      answers.filter((a) => a.status === 200),
      answers.map((a) => `${a.status} ${a.text}`).join("\n"),
    ).toHaveLength(1);
    const [row] = await queryRows<{ decision: string }>(
      handle.db,
      sql`select decision from approval_requests where tenant_id = ${t.tenantId} and id = ${approvalId}`,
    );
    const winner = answers.findIndex((a) => a.status === 200);
    expect(row!.decision, answers.map((a) => `${a.status} ${a.text.slice(0, 300)}`).join("\n")).toBe(
      winner === 0 ? "approve" : "reject",
    );
  });

  it("right after a change through one server, every server's gate answers from it", async () => {
    const key = newKey("gate");
    const taskId = await checkpointed({
      side_effects: { update_record: { idempotency_key: key, status: "not_started" } },
    });
    const gateOn = (s: string) => api(t.apiKey, s).post<GateVerdict>(`/api/v1/tasks/${taskId}/resume`, {});
    // Every server has asked (and filled whatever it keeps per process) before the change.
    for (const s of servers) expect((await gateOn(s)).body.verdict).toBe("resume");
    const go = await api(t.apiKey, servers[0]).post<{ decision: string }>(
      effectPath(taskId, "update_record", "intent"),
      intentBody(key),
    );
    expect(go.body.decision).toBe("go");
    const interrupted = await api(t.apiKey, servers[0]).post("/api/v1/events", {
      events: [makeEvent(taskId, { type: "run.interrupted", occurred_at: new Date(Date.now() + 1000).toISOString() })],
    });
    expect(interrupted.status).toBe(200);
    for (const s of servers) {
      const v = (await gateOn(s)).body;
      expect(v.verdict, s).toBe("stop");
      expect(
        v.reasons.map((r) => r.code),
        s,
      ).toContain("side_effect_unknown");
    }
    // A database writer changes the stored checkpoint: every server checks the changed row, none answers from what it
    // checked before.
    await handle.db.execute(
      sql`update task_checkpoints set record = jsonb_set(record, '{phase}', '"forged"')
          where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    for (const s of servers) {
      const v = (await gateOn(s)).body;
      expect(v.verdict, s).toBe("stop");
      expect(
        v.reasons.map((r) => r.code),
        s,
      ).toContain("record_signature_invalid");
    }
  });

  it("the arrival feed the live pages poll shows, on every server, an event reported through another", async () => {
    const taskId = await checkpointed({ side_effects: {} });
    const feed = (s: string, since: string) =>
      api(t.apiKey, s).get<{ events: Array<{ id: string }>; next_since: string }>(
        `/api/v1/tasks/${taskId}/timeline?since=${encodeURIComponent(since)}&limit=100`,
      );
    const before = await Promise.all(servers.map((s) => feed(s, "0")));
    const event = makeEvent(taskId, { type: "tool.called", attrs: { tool: "read_page", call_id: "call_1" } });
    expect((await api(t.apiKey, servers[0]).post("/api/v1/events", { events: [event] })).status).toBe(200);
    for (const [i, s] of servers.entries()) {
      const after = await feed(s, before[i]!.body.next_since);
      expect(
        after.body.events.map((e) => e.id),
        s,
      ).toContain(event.id);
    }
  });

  it("a session works on every server and ends on every server at sign-out", async () => {
    const cookie = await signIn(t.users.viewer.email, t.password, { base: servers[0] });
    for (const s of servers) expect((await api({ cookie }, s).get("/api/v1/me")).status, s).toBe(200);
    expect(await signOut(cookie, servers[1])).toBeLessThan(400);
    for (const s of servers) expect((await api({ cookie }, s).get("/api/v1/me")).status, s).toBe(401);
  });
});
