/**
 * Vault custody over the real HTTP API on PostgreSQL (decision 0019):
 * - the resume gate and the intent route judge the credentials a run holds against the current policy: held longer
 *   than the policy's ttl (counted from the server's receive time, never the runtime's clock) is `credential_expired`,
 *   no longer declared by the current version is `credential_revoked` ("removed from policy vN");
 * - vault-lane events that carry a credential value or a placeholder are stored redacted and flagged (timeline,
 *   credentials view), on the events batch;
 * - the timeline overview names the compaction whose constraints were not re-checked, for short and long runs.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { GateVerdict, StoredEvent, TimelineOverview } from "@/lib/contract/api";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
import { seedLongRun } from "../../scripts/lib/long-run";
import { askGate, checkpoint, intentBody, postIntent } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, testDbForFile } from "./helpers";
import { recordsPolicyYaml, type PolicyFixture } from "../support/policy-document";

const handle = testDbForFile();
const enc = encodeURIComponent;

/**
 * The shared records policy (tests/support/policy-document.ts), its credential held for 15 minutes at most; the write
 * tool names its host and asks for no approval, so the gate alone answers its intents.
 */
const withTtl = (d: PolicyFixture) => {
  d.credentials[0]!.ttl = "15m";
  delete d.tools[0]!.requires_approval;
  d.tools[0]!.hosts = ["records.example.com"];
};
const POLICY = recordsPolicyYaml(withTtl);
/** The same policy without the records credential. */
const WITHOUT_CREDENTIAL = recordsPolicyYaml((d) => {
  withTtl(d);
  d.credentials = [];
});

async function activate(owner: { cookie: string }, text: string): Promise<number> {
  const stored = await api(owner).request<{ version: number; findings: unknown[] }>("POST", "/api/v1/policies", {
    raw: text,
    headers: { "content-type": "application/yaml" },
  });
  expect(stored.status, stored.text).toBe(201);
  const activated = await api(owner).request("POST", `/api/v1/policies/${stored.body.version}/activate`);
  expect(activated.status, activated.text).toBe(200);
  return stored.body.version;
}

describe("the gate and the intent route judge held credentials against the current policy", () => {
  it("a ttl counts from the server's receipt of the issue; a credential the current version drops is revoked", async () => {
    const t = await createTestTenant(handle.db);
    const owner = await signInAs(t, "owner");
    const taskId = newTaskId("vault-policy");
    await checkpoint(t, taskId);
    const v1 = await activate(owner, POLICY);

    // The runtime's clock says the credential was issued two hours ago; the server received it now: not expired.
    const issued = makeEvent(taskId, {
      plane: "vault",
      type: "credential.issued",
      occurred_at: new Date(Date.now() - 2 * 3600_000).toISOString(),
      attrs: {
        credential_ref: "records-api",
        credential_id: "c1",
        scope: "records:write",
        allowed_hosts: ["records.example.com"],
      },
    });
    const now = () => new Date().toISOString();
    const attached = makeEvent(taskId, {
      plane: "vault",
      type: "credential.attached",
      occurred_at: now(),
      attrs: { credential_ref: "records-api", credential_id: "c1", delivery: "egress-proxy" },
    });
    expect((await postEvents(t.apiKey, [issued, attached])).status).toBe(200);
    let n = 0;
    // Each intent a write of its own payload (one payload under two names is a duplicate, decision 0029).
    const intent = () =>
      postIntent(
        t.apiKey,
        taskId,
        `sync_index_${++n}`,
        intentBody(`k-${taskId}-${n}`, { payload_digest: sha256Hex(`sync_index_${n}`) }),
      );
    const ask = async () => {
      const res = await askGate(t.apiKey, taskId);
      expect(res.status, res.text).toBe(200);
      return res.body as GateVerdict;
    };
    expect((await ask()).verdict).toBe("resume");
    const go = await intent();
    expect(go.status, go.text).toBe(200);

    // Twenty minutes later by the server's clock (the receive time moved back), past the policy's 15m ttl. An attach of
    // the same instance since does not renew it.
    await handle.db.execute(sql`update events set received_at = received_at - interval '20 minutes'
                                where tenant_id = ${t.tenantId} and event_id = ${issued.id}`);
    const reattached = makeEvent(taskId, {
      plane: "vault",
      type: "credential.attached",
      occurred_at: now(),
      attrs: { credential_ref: "records-api", credential_id: "c1" },
    });
    expect((await postEvents(t.apiKey, [reattached])).status).toBe(200);
    const expired = await ask();
    expect(expired.verdict).toBe("stop");
    expect(expired.reasons).toEqual([
      expect.objectContaining({
        code: "credential_expired",
        message: expect.stringContaining(`ttl of 15m in policy v${v1}`),
      }),
    ]);
    const refused = await intent();
    expectError(refused, 409, "gate_stop");
    expect(JSON.stringify(refused.body)).toContain("credential_expired");

    // A fresh instance is within its ttl again: both answer go.
    const fresh = makeEvent(taskId, {
      plane: "vault",
      type: "credential.issued",
      occurred_at: now(),
      attrs: { credential_ref: "records-api", credential_id: "c2", scope: "records:write" },
    });
    expect((await postEvents(t.apiKey, [fresh])).status).toBe(200);
    expect((await ask()).verdict).toBe("resume");
    expect((await intent()).status).toBe(200);

    // A new version that no longer declares the credential: the run holds authority nobody grants.
    const v2 = await activate(owner, WITHOUT_CREDENTIAL);
    const revoked = await ask();
    expect(revoked.verdict).toBe("stop");
    expect(revoked.reasons).toEqual([
      expect.objectContaining({
        code: "credential_revoked",
        target: `/policies?v=${v2}`,
        message: expect.stringContaining(`removed from policy v${v2}`),
      }),
    ]);
    const refusedAgain = await intent();
    expectError(refusedAgain, 409, "gate_stop");
    expect(JSON.stringify(refusedAgain.body)).toContain(`removed from policy v${v2}`);

    // Rolling back to the version that declares it clears it, on both routes.
    expect((await api(owner).request("POST", `/api/v1/policies/${v1}/activate`)).status).toBe(200);
    expect((await ask()).verdict).toBe("resume");
    expect((await intent()).status).toBe(200);
  });
});

describe("vault-lane events are metadata only", () => {
  it("stores an event that carried a value or a placeholder redacted and flagged, and says so on every read", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const taskId = newTaskId("vault-flag");
    const plain = makeEvent(taskId, {
      plane: "vault",
      type: "credential.issued",
      attrs: { credential_ref: "records-api", scope: "records:write", expires_at: "2026-11-29T13:00:00Z" },
    });
    const withValue = makeEvent(taskId, {
      plane: "vault",
      type: "credential.attached",
      attrs: { credential_ref: "records-api", env: "RECORDS_TOKEN", value: "hunter2-but-longer" },
    });
    const withPlaceholder = makeEvent(taskId, {
      plane: "vault",
      type: "credential.used",
      attrs: {
        credential_ref: "records-api",
        host: "records.example.com",
        source: "{{vault:kv/records#token}}",
        op: "op://Private/records/token",
      },
    });
    const withKey = makeEvent(taskId, {
      plane: "vault",
      type: "credential.issued",
      attrs: { credential_ref: "openai", token: 12345678, hint: `sk-${"a".repeat(40)}` },
    });
    const toolValue = makeEvent(taskId, {
      plane: "tools",
      type: "tool.called",
      attrs: { call_id: "c1", tool: "set_field", value: "hunter2-but-longer" },
    });
    const res = await postEvents(t.apiKey, [plain, withValue, withPlaceholder, withKey, toolValue]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r) => r.status)).toEqual(["stored", "stored", "stored", "stored", "stored"]);

    const rows = await queryRows<{
      event_id: string;
      attrs: Record<string, unknown>;
      redaction_count: number;
      redaction_kinds: string[] | null;
    }>(
      handle.db,
      sql`select event_id, attrs, redaction_count, redaction_kinds from events where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    const row = Object.fromEntries(rows.map((r) => [r.event_id, r]));
    expect(row[plain.id]).toMatchObject({ attrs: plain.attrs, redaction_count: 0, redaction_kinds: null });
    expect(row[withValue.id]).toMatchObject({
      attrs: { credential_ref: "records-api", env: "RECORDS_TOKEN", value: "[REDACTED]" },
      redaction_count: 1,
      redaction_kinds: ["credential_value"],
    });
    expect(row[withPlaceholder.id]).toMatchObject({
      attrs: { credential_ref: "records-api", host: "records.example.com", source: "[REDACTED]", op: "[REDACTED]" },
      redaction_kinds: ["vault_placeholder"],
    });
    expect(row[withKey.id]!.attrs).toEqual({ credential_ref: "openai", token: "[REDACTED]", hint: "[REDACTED]" });
    expect(row[withKey.id]!.redaction_kinds).toEqual(["api_key", "secret_field"]);
    // No value, placeholder or key of the vault lane reached the database.
    const text = JSON.stringify(rows.filter((r) => r.event_id !== toolValue.id));
    for (const secret of ["hunter2", "{{vault", "op://", "sk-aaaa", "12345678"]) expect(text).not.toContain(secret);
    // A `value` on the tools lane is ordinary data.
    expect(row[toolValue.id]).toMatchObject({ attrs: toolValue.attrs, redaction_kinds: null });

    // The same event sent again is a duplicate (compared as stored, redacted), not a conflict.
    expect((await postEvents(t.apiKey, [withValue])).body.results[0]!.status).toBe("duplicate");

    // Every read says which events were flagged: the timeline (overview and pages) and the credentials view.
    const viewer = await signInAs(t, "viewer");
    const overview = await api(viewer).get<TimelineOverview>(`/api/v1/tasks/${enc(taskId)}/timeline/overview`);
    expect(overview.status).toBe(200);
    const flagged = (events: StoredEvent[]) =>
      events
        .filter((e) => e.credential_flagged)
        .map((e) => e.id)
        .sort();
    expect(flagged(overview.body.events)).toEqual([withValue.id, withPlaceholder.id, withKey.id].sort());
    expect(overview.body.events.find((e) => e.id === withValue.id)?.redaction_kinds).toEqual(["credential_value"]);
    expect(overview.body.events.find((e) => e.id === plain.id)).toMatchObject({
      credential_flagged: false,
      redaction_kinds: [],
    });
    const page = await api(viewer).get<{ events: StoredEvent[] }>(`/api/v1/tasks/${enc(taskId)}/timeline?limit=50`);
    expect(flagged(page.body.events)).toEqual(flagged(overview.body.events));
    const feed = await api(t.apiKey).get<{ events: StoredEvent[] }>(`/api/v1/tasks/${enc(taskId)}/timeline?since=0`);
    expect(flagged(feed.body.events)).toEqual(flagged(overview.body.events));
    const creds = await api(viewer).get<{
      flagged_events: Array<{ event_id: string; credential_ref: string | null; kinds: string[] }>;
    }>(`/api/v1/tasks/${enc(taskId)}/credentials`);
    expect(creds.status, creds.text).toBe(200);
    expect(creds.body.flagged_events.map((e) => e.event_id).sort()).toEqual(flagged(overview.body.events));
    expect(creds.body.flagged_events.find((e) => e.event_id === withPlaceholder.id)).toMatchObject({
      credential_ref: "records-api",
      kinds: ["vault_placeholder"],
    });
    // Another tenant sees none of it.
    const other = await createTestTenant(handle.db, { roles: [] });
    expect((await api(other.apiKey).get(`/api/v1/tasks/${enc(taskId)}/credentials`)).status).toBe(404);
  });
});

describe("the timeline overview names the compaction whose constraints were not re-checked", () => {
  it("for a short run, by receive order, and for a long run with its event loaded however old", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("compacted");
    const overview = async (id: string) =>
      (await api(t.apiKey).get<TimelineOverview>(`/api/v1/tasks/${enc(id)}/timeline/overview`)).body;
    const compaction = makeEvent(taskId, {
      plane: "session",
      type: "compaction.performed",
      occurred_at: "2026-11-30T10:00:00.000Z",
      attrs: {},
    });
    expect((await postEvents(t.apiKey, [compaction])).status).toBe(200);
    expect((await overview(taskId)).compaction_unchecked).toEqual({
      event_id: compaction.id,
      occurred_at: "2026-11-30T10:00:00.000000Z",
    });
    // A check dated earlier by the runtime's clock still counts: it arrived later.
    const check = makeEvent(taskId, {
      plane: "session",
      type: "constraint.checked",
      occurred_at: "2026-11-30T09:00:00.000Z",
      attrs: { ok: true },
    });
    expect((await postEvents(t.apiKey, [check])).status).toBe(200);
    expect((await overview(taskId)).compaction_unchecked).toBeNull();

    // A long run (sent as markers, the newest and bins): an early compaction is carried all the same.
    const run = await seedLongRun(handle.db, {
      tenantId: t.tenantId,
      taskId: newTaskId("long-compacted"),
      events: 2_500,
      attempts: 3,
    });
    const early = makeEvent(run.taskId, {
      plane: "session",
      type: "compaction.performed",
      occurred_at: new Date(run.first.getTime() + 5_500).toISOString(),
      attrs: {},
    });
    expect((await postEvents(t.apiKey, [early])).status).toBe(200);
    const long = await overview(run.taskId);
    expect(long.complete).toBe(false);
    expect(long.compaction_unchecked?.event_id).toBe(early.id);
    expect(long.events.some((e) => e.id === early.id)).toBe(true);
    expect(long.newest_from! > early.occurred_at).toBe(true);
  });
});
