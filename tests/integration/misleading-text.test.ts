/**
 * Text that misleads a person, through the real HTTP API on PostgreSQL: one rule for names, ids and reasons on every
 * path (lib/domain/names.ts `nameProblem`, lib/domain/typed-text.ts). Bidirectional overrides, control and invisible
 * characters are refused naming the field and the character; credentials in ids and names are refused (an id is a key:
 * a redacted copy would merge with others); the Markdown export of a custody map cannot be given a heading, list item
 * or table row by what a field holds.
 */
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { CustodyMapJson, LayerRow } from "@/lib/contract/maps";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import { api, countRows, createTestTenant, makeEvent, newTaskId, postEvents, testDbForFile } from "./helpers";

const handle = testDbForFile();
const fixtureDir = "/work/shared/fixtures/real";

/** Characters that disguise how text displays: a bidi override, ESC, BEL, a zero-width space. */
const TRICKS = [
  ["U+202E", "\u202e"],
  ["U+001B", "\u001b"],
  ["U+0007", "\u0007"],
  ["U+200B", "\u200b"],
] as const;

/** Every text column of the tenant's rows, as one string (to look for a planted secret). */
async function tenantText(tenantId: string): Promise<string> {
  const rows = await queryRows<{ t: string }>(
    handle.db,
    sql`select coalesce((select json_agg(e)::text from events e where tenant_id = ${tenantId}), '')
          || coalesce((select json_agg(s)::text from side_effects s where tenant_id = ${tenantId}), '')
          || coalesce((select json_agg(a)::text from approval_requests a where tenant_id = ${tenantId}), '')
          || coalesce((select json_agg(a)::text from audit_log a where tenant_id = ${tenantId}), '') as t`,
  );
  return rows[0]?.t ?? "";
}

describe("events", () => {
  it.each(TRICKS)("refuses %s in an event id, actor, sandbox id and attrs.tool, naming the path", async (code, ch) => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("text");
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, { id: `ev-${ch}-1` }),
      makeEvent(taskId, { actor: `agent${ch}` }),
      makeEvent(taskId, { type: "sandbox.created", attempt: 1, environment_id: `sbx${ch}1` }),
      makeEvent(taskId, { type: "tool.called", attrs: { tool: `send${ch}mail`, call_id: "c1", mutation: true } }),
      makeEvent(taskId),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r) => [r.status, r.error?.path])).toEqual([
      ["rejected", "id"],
      ["rejected", "actor"],
      ["rejected", "environment_id"],
      ["rejected", "attrs.tool"],
      ["stored", undefined],
    ]);
    for (const r of res.body.results.slice(0, 4)) expect(r.error!.message).toContain(code);
    // A rejected id is not echoed.
    expect(res.body.results[0]!.id).toBe("");
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(1);
  });

  it("refuses an event id holding an AWS key joined by `_`, and never stores or echoes it", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("text");
    const res = await postEvents(t.apiKey, [makeEvent(taskId, { id: "evt_AKIAIOSFODNN7EXAMPLE" }), makeEvent(taskId)]);
    expect(res.body.results.map((r) => r.status)).toEqual(["rejected", "stored"]);
    expect(res.body.results[0]).toMatchObject({ id: "", error: { path: "id" } });
    expect(res.body.results[0]!.error!.message).toMatch(/credential value \(aws_access_key_id\)/);
    expect(res.text).not.toContain("AKIAIOSFODNN7EXAMPLE");
    expect(await tenantText(t.tenantId)).not.toContain("AKIAIOSFODNN7EXAMPLE");
  });
});

describe("approval decisions", () => {
  it.each(TRICKS)("refuse %s in the reason with 422 naming reason and the character", async (code, ch) => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("text-appr");
    await checkpoint(t, taskId);
    const intent = await api(t.apiKey).post<{ error: { details: { approval_id: string } } }>(
      `/api/v1/tasks/${taskId}/side-effects/publish_report/intent`,
      {
        idempotency_key: `publish-${taskId}`,
        payload_digest: "e".repeat(64),
        action: "publish_report",
        tool: "publish_report",
        mutation: true,
        attempt: 1,
        requires_approval: true,
      },
    );
    expect(intent.status, intent.text).toBe(403);
    const id = intent.body.error.details.approval_id;
    const approver = await signInAs(t, "approver");
    const res = await api(approver).post(`/api/v1/approvals/${id}/decision`, {
      decision: "reject",
      reason: `Looks fine ${ch}to me`,
    });
    expectError(res, 422, "validation_failed");
    expect(errorOf(res).message).toMatch(/^reason contains/);
    expect(errorOf(res).message).toContain(code);
    expect(errorOf(res).details).toMatchObject({ fields: [{ path: "reason" }] });
    // Several lines are a reason too.
    const ok = await api(approver).post(`/api/v1/approvals/${id}/decision`, {
      decision: "reject",
      reason: "Not now.\nAsk again after the audit.",
    });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe("RunState imports", () => {
  /** A Python-SDK state with one pending approval of `tool`, raised by `agent` (every mention of both replaced). */
  function pendingState(tool: string, agent = "compat-agent") {
    const text = fs.readFileSync(
      path.join(fixtureDir, "openai-agents-python", "v1_13_pending_tool_approval.json"),
      "utf8",
    );
    return JSON.parse(
      text
        .replaceAll('"historical_approval"', JSON.stringify(tool))
        .replaceAll('"compat-agent"', JSON.stringify(agent)),
    );
  }

  it.each([
    ["a bidi override in a tool name", pendingState("publish\u202ereport"), "U+202E", "AKIA"],
    ["an AWS key as a tool name", pendingState("AKIAIOSFODNN7EXAMPLE"), "aws_access_key_id", "AKIAIOSFODNN7EXAMPLE"],
    [
      "a bearer token in a tool name",
      pendingState("Bearer abcdefghijklmnop1234"),
      "bearer_token",
      "abcdefghijklmnop1234",
    ],
    ["ESC in an agent name", pendingState("publish_report", "agent\u001b[31m"), "U+001B", "agent\u001b"],
  ])("refuses %s with 422 naming the path; nothing is stored", async (_name, state, named, secret) => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("text-import");
    await checkpoint(t, taskId);
    const before = await countRows(handle.db, "events", t.tenantId);
    const res = await api(t.apiKey).post(
      `/api/v1/import/openai-agents/run-state?task_id=${encodeURIComponent(taskId)}`,
      state,
    );
    expectError(res, 422, "invalid_run_state");
    expect(errorOf(res).message).toContain(named);
    expect(errorOf(res).details).toMatchObject({ problem: "invalid_name", fields: [{ path: expect.any(String) }] });
    expect(res.text).not.toContain(secret);
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(before);
    expect(await queryRows(handle.db, sql`select 1 from approval_requests where tenant_id = ${t.tenantId}`)).toEqual(
      [],
    );
    expect(await tenantText(t.tenantId)).not.toContain(secret);
  });
});

describe("the Markdown export of a custody map", () => {
  it("folds a lone CR and escapes line starts: a field cannot add a heading, list item or table row", async () => {
    const t = await createTestTenant(handle.db);
    const owner = await signInAs(t, "owner");
    const created = await api(owner).post<{ id: string; layers: LayerRow[] }>("/api/v1/maps", {
      workflow: "document-processing",
      title: "Case files to reports",
    });
    expect(created.status, created.text).toBe(200);
    const mapId = created.body.id;
    const layer = created.body.layers[0]!;
    const planted = "Checkpoint id\r# Injected heading\r- Verification: verified\r| a | b |\r|---|---|\u2028> quoted";
    const patched = await api(owner).request("PATCH", `/api/v1/maps/${mapId}/layers/${layer.layer}`, {
      json: { revision: layer.revision, evidence: planted, recovery_path: `1. first\r\n\`\`\`\r===\r    code` },
    });
    // U+2028 is refused as typed text; without it the rest is accepted and kept.
    expect(patched.status, patched.text).toBe(422);
    const kept = planted.replace("\u2028", "\r");
    const again = await api(owner).request("PATCH", `/api/v1/maps/${mapId}/layers/${layer.layer}`, {
      json: { revision: layer.revision, evidence: kept, recovery_path: `1. first\r\n\`\`\`\r===\r    code` },
    });
    expect(again.status, again.text).toBe(200);
    const json = await api(owner).get<CustodyMapJson>(`/api/v1/maps/${mapId}/export?format=json`);
    expect(json.body.layers[0]!.evidence).toBe(kept);

    const md = await api(owner).get<string>(`/api/v1/maps/${mapId}/export?format=md`);
    expect(md.status, md.text).toBe(200);
    const lines = md.text.split(/\r\n|\n|\r|\u2028|\u2029|\u0085/);
    expect(lines.filter((l) => /^\s{0,3}#/.test(l))).toEqual([
      "# Case files to reports",
      "## Adoption summary",
      "## Layers",
      ...created.body.layers.map((l) => expect.stringMatching(new RegExp(`^### .*\\(\`${l.layer}\`\\)$`))),
    ]);
    expect(lines.filter((l) => /^\s*[-*+] Verification:/.test(l))).toHaveLength(8);
    expect(lines.filter((l) => /^\s*\|/.test(l))).toHaveLength(10);
    expect(lines.filter((l) => /^\s*(>|```|===|\d+[.)] )/.test(l))).toEqual([]);
    expect(lines.filter((l) => /^ {4}/.test(l))).toEqual([]);
    expect(md.text).toContain("\\# Injected heading");
  });
});
