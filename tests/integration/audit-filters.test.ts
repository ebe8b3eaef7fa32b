/**
 * The audit log's filters and export (issue 24, "Settings … the Audit page with filters and an export, and
 * `GET /api/v1/audit` with the same filters for machines"; decision 0048), through the built server on PostgreSQL:
 * each filter alone and combined, keyset pages that keep the filters, bad input answered 400 naming the parameter and
 * writing nothing, who may read (every role, full and read-only keys; runtime-only and task-prefix keys refused by
 * their scope), another tenant's callers seeing only their own log, and an export that holds exactly the filtered
 * listing with hashes that recompute and chain.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { auditEntryHash, GENESIS_HASH } from "@/lib/domain/audit/append";
import { intentBody, newKey, postIntent } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import {
  api,
  createTestTenant,
  makeRecord,
  newTaskId,
  rid,
  testDbForFile,
  type Auth,
  type FullTestTenant,
  type TestTenant,
} from "./helpers";

const handle = testDbForFile();

type Entry = {
  seq: number;
  at: string;
  actor_kind: string;
  actor_id: string;
  actor_label: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
  prev_hash: string;
  hash: string;
};
type Listing = { entries: Entry[]; next_cursor: string | null };
type Line = Entry & { tenant_id: string };

/** Every entry of a filtered listing, following next_cursor with the same filters. */
async function listAll(auth: Auth, query: string): Promise<Entry[]> {
  const out: Entry[] = [];
  let before: string | null = null;
  for (;;) {
    const params = new URLSearchParams(query);
    params.set("limit", "2");
    if (before) params.set("before", before);
    const res = await api(auth).get<Listing>(`/api/v1/audit?${params.toString()}`);
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.entries);
    if (!res.body.next_cursor) return out;
    before = res.body.next_cursor;
  }
}

/** The export's lines for `query`. */
async function exportLines(auth: Auth, query: string): Promise<{ lines: Line[]; headers: Headers }> {
  const res = await api(auth).get(`/api/v1/audit/export${query ? `?${query}` : ""}`);
  expect(res.status, res.text).toBe(200);
  const lines = res.text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
  return { lines, headers: res.headers };
}

/** The tenant's chain as stored: its row count and its head. */
async function chainState(tenantId: string): Promise<{ n: number; pending: number; head: string | null }> {
  const [row] = await queryRows<{ n: number; pending: number; head: string | null }>(
    handle.db,
    sql`select (select count(*)::int from audit_log where tenant_id = ${tenantId}) as n,
               (select count(*)::int from audit_pending where tenant_id = ${tenantId}) as pending,
               (select hash from audit_heads where tenant_id = ${tenantId}) as head`,
  );
  return row!;
}

describe("audit filters and export", () => {
  let t: FullTestTenant;
  let other: TestTenant;
  let owner: { cookie: string };
  let viewer: { cookie: string };
  let otherOwner: { cookie: string };
  let taskA: string;
  let taskB: string;
  let runtimeKey: string;
  let prefixKey: string;
  let readOnlyKey: string;

  const makeKey = async (body: Record<string, unknown>): Promise<string> => {
    const res = await api(owner).post<{ key: string }>("/api/v1/settings/api-keys", { name: `k ${rid()}`, ...body });
    expect(res.status, res.text).toBe(200);
    return res.body.key;
  };

  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    other = await createTestTenant(handle.db, { roles: ["owner"] });
    owner = await signInAs(t, "owner");
    viewer = await signInAs(t, "viewer");
    otherOwner = await signInAs(other, "owner");
    taskA = newTaskId("audit-a");
    taskB = newTaskId("audit-b");
    for (const id of [taskA, taskB]) {
      const put = await api(t.apiKey).put(`/api/v1/tasks/${id}`, makeRecord(id));
      expect(put.status, put.text).toBe(200);
    }
    const intent = await postIntent(t.apiKey, taskA, "update_record", intentBody(newKey()));
    expect(intent.status, intent.text).toBe(200);
    runtimeKey = await makeKey({ scope: "runtime" });
    prefixKey = await makeKey({ scope: "task_prefix", task_prefix: "audit-" });
    readOnlyKey = await makeKey({ scope: "read_only" });
    // The other tenant has a task with the same id: its entries must never show in this tenant's answers.
    const put = await api(other.apiKey).put(`/api/v1/tasks/${taskA}`, makeRecord(taskA));
    expect(put.status, put.text).toBe(200);
  });

  it("without filters lists the whole log newest first, pages by before, and every role may read it", async () => {
    const all = await listAll(owner, "");
    expect(all.length).toBeGreaterThanOrEqual(6);
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((a, b) => b - a));
    expect(all.at(-1)!.seq).toBe(1);
    const first = await api(viewer).get<Listing>("/api/v1/audit?limit=3");
    expect(first.status).toBe(200);
    expect(first.body.entries.map((e) => e.seq)).toEqual(all.slice(0, 3).map((e) => e.seq));
    expect(first.body.next_cursor).toBe(String(all[2]!.seq));
  });

  it("action: only entries with that action", async () => {
    const checkpoints = await listAll(owner, "action=task.checkpointed");
    expect(checkpoints.map((e) => e.target).sort()).toEqual([`task:${taskA}`, `task:${taskB}`].sort());
    const keys = await listAll(owner, "action=api_key.created");
    expect(keys).toHaveLength(3);
    expect(keys.every((e) => e.action === "api_key.created")).toBe(true);
  });

  it("actor: by email (any case) or by user id, as stored", async () => {
    const email = t.users.owner.email;
    const byEmail = await listAll(owner, `actor=${encodeURIComponent(email.toUpperCase())}`);
    expect(byEmail.length).toBeGreaterThanOrEqual(3);
    expect(byEmail.every((e) => e.actor_label === email)).toBe(true);
    const byId = await listAll(owner, `actor=${t.users.owner.userId}`);
    expect(byId.map((e) => e.seq)).toEqual(byEmail.map((e) => e.seq));
    expect(await listAll(owner, "actor=nobody%40nowhere.test")).toEqual([]);
  });

  it("task: the task's own entries and its side effects', not another task's", async () => {
    const a = await listAll(owner, `task=${encodeURIComponent(taskA)}`);
    expect(a.map((e) => e.action).sort()).toEqual(["side_effect.intent_recorded", "task.checkpointed"]);
    expect(a.every((e) => e.target === `task:${taskA}` || e.target.startsWith(`side_effect:${taskA}/`))).toBe(true);
    const b = await listAll(owner, `task=${encodeURIComponent(taskB)}`);
    expect(b.map((e) => e.target)).toEqual([`task:${taskB}`]);
  });

  it("combined filters narrow together; an empty match is an empty page", async () => {
    const both = await listAll(owner, `action=task.checkpointed&task=${encodeURIComponent(taskA)}`);
    expect(both.map((e) => e.target)).toEqual([`task:${taskA}`]);
    const none = await api(owner).get<Listing>(
      `/api/v1/audit?action=api_key.created&task=${encodeURIComponent(taskA)}`,
    );
    expect(none.body).toEqual({ entries: [], next_cursor: null });
  });

  it("from/to: dates cover whole UTC days, date-times are instants, and both bound inclusively", async () => {
    const all = await listAll(owner, "");
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await listAll(owner, `from=${today}&to=${today}`)).length).toBe(all.length);
    expect(await listAll(owner, `from=${tomorrow}`)).toEqual([]);
    expect(await listAll(owner, `to=${yesterday}`)).toEqual([]);
    const checkpoints = await listAll(owner, "action=task.checkpointed");
    const older = checkpoints.at(-1)!;
    const fromOlder = await listAll(owner, `from=${encodeURIComponent(older.at)}`);
    expect(fromOlder.map((e) => e.seq)).toEqual(all.filter((e) => e.at >= older.at).map((e) => e.seq));
    const toOlder = await listAll(owner, `to=${encodeURIComponent(older.at)}`);
    expect(toOlder.map((e) => e.seq)).toEqual(all.filter((e) => e.at <= older.at).map((e) => e.seq));
    expect(toOlder.map((e) => e.seq)).toContain(older.seq);
  });

  it("bad input: 400 bad_request naming the parameter, and nothing written", async () => {
    const before = await chainState(t.tenantId);
    const cases: Array<[string, string]> = [
      ["action=task.exploded", "action"],
      ["from=2026-13-01", "from"],
      ["to=2026-02-30", "to"],
      ["from=yesterday", "from"],
      ["from=2026-01-02&to=2026-01-01", "from"],
      ["acton=task.checkpointed", "acton"],
      ["action=task.checkpointed&action=api_key.created", "action"],
      ["limit=0", "limit"],
      ["limit=201", "limit"],
      ["before=abc", "before"],
      [`task=${"x".repeat(600)}`, "task"],
    ];
    for (const [query, param] of cases) {
      for (const path of ["/api/v1/audit", "/api/v1/audit/export"]) {
        if (path.endsWith("export") && (param === "limit" || param === "before")) continue;
        const res = await api(owner).get(`${path}?${query}`);
        expectError(res, 400, "bad_request");
        expect(errorOf(res).message.startsWith(param), `${path}?${query}: ${errorOf(res).message}`).toBe(true);
      }
    }
    // An export takes no page: before and limit are refused by name.
    expectError(await api(owner).get("/api/v1/audit/export?limit=5"), 400, "bad_request");
    expect(await chainState(t.tenantId)).toEqual(before);
  });

  it("who may read: people of any role and full or read-only keys; runtime-only and task-prefix keys are refused", async () => {
    for (const auth of [viewer, t.apiKey, readOnlyKey] as Auth[]) {
      expect((await api(auth).get("/api/v1/audit?limit=1")).status).toBe(200);
      expect((await api(auth).get("/api/v1/audit/export?action=task.checkpointed")).status).toBe(200);
    }
    for (const path of ["/api/v1/audit", "/api/v1/audit/export"]) {
      expectError(await api(runtimeKey).get(path), 403, "scope_runtime_only");
      expectError(await api(prefixKey).get(`${path}?task=${encodeURIComponent(taskA)}`), 403, "scope_task_prefix");
      expectError(await api(undefined).get(path), 401, "unauthorized");
    }
  });

  it("another tenant's owner and key see only their own log, even filtering by this tenant's task or people", async () => {
    const mine = await listAll(owner, "");
    const ownHashes = new Set(mine.map((e) => e.hash));
    for (const auth of [otherOwner, other.apiKey] as Auth[]) {
      const theirs = await listAll(auth, "");
      expect(theirs.length).toBeGreaterThan(0);
      expect(theirs.some((e) => ownHashes.has(e.hash))).toBe(false);
      // The same task id exists there too: the filter finds their entries, never these.
      const task = await listAll(auth, `task=${encodeURIComponent(taskA)}`);
      expect(task.map((e) => e.action)).toEqual(["task.checkpointed"]);
      expect(task.some((e) => ownHashes.has(e.hash))).toBe(false);
      expect(await listAll(auth, `actor=${encodeURIComponent(t.users.owner.email)}`)).toEqual([]);
      const { lines } = await exportLines(auth, "");
      expect(lines.every((l) => l.tenant_id === other.tenantId)).toBe(true);
      expect(JSON.stringify(lines)).not.toContain(t.tenantId);
    }
  });

  it("the export holds exactly the filtered listing, as an attachment, with hashes that recompute and chain", async () => {
    const query = `task=${encodeURIComponent(taskA)}`;
    const listed = await listAll(owner, query);
    const { lines, headers } = await exportLines(viewer, query);
    expect(headers.get("content-type")).toContain("application/x-ndjson");
    expect(headers.get("content-disposition")).toMatch(/^attachment; filename="audit-\d{8}T\d{6}Z\.jsonl"$/);
    expect(lines).toEqual(listed.map((e) => ({ tenant_id: t.tenantId, ...e })));

    const rehash = (l: Line) =>
      auditEntryHash(l.prev_hash, {
        tenantId: l.tenant_id,
        seq: l.seq,
        at: l.at,
        actorKind: l.actor_kind,
        actorId: l.actor_id,
        actorLabel: l.actor_label,
        action: l.action,
        target: l.target,
        details: l.details,
      });
    // The whole log: every line recomputes, each links to the one before, the first to the genesis hash.
    const whole = (await exportLines(t.apiKey, "")).lines;
    expect(whole.map((l) => l.seq)).toEqual((await listAll(owner, "")).map((e) => e.seq));
    const oldestFirst = [...whole].reverse();
    expect(oldestFirst[0]!.seq).toBe(1);
    expect(oldestFirst[0]!.prev_hash).toBe(GENESIS_HASH);
    oldestFirst.forEach((l, i) => {
      expect(rehash(l), `entry ${l.seq}`).toBe(l.hash);
      if (i > 0) expect(l.prev_hash, `entry ${l.seq}`).toBe(oldestFirst[i - 1]!.hash);
    });
    // A filtered export's lines recompute alone.
    for (const l of lines) expect(rehash(l)).toBe(l.hash);
    const [head] = await queryRows<{ hash: string }>(
      handle.db,
      sql`select hash from audit_heads where tenant_id = ${t.tenantId}`,
    );
    expect(whole[0]!.hash).toBe(head!.hash);
  });
});
