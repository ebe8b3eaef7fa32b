/**
 * `POST /api/v1/import/openai-agents/run-state` on real PostgreSQL through the built server (decision
 * 0013): each import rule on the real samples of both SDKs and on states the real `@openai/agents` SDK
 * makes, a repeated import that creates nothing, refusals (422) that write nothing and quote nothing, wrong role, wrong
 * tenant.
 */
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { toolCallDigest } from "@/lib/domain/imports/openai-agents-run-state";
import { toolCallEffectName } from "@/lib/domain/side-effects/attempts";
import { pendingApprovalState, nestedApprovalState } from "../support/sdk-run-states";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { auditRows, effectRow } from "./support/stored-rows";
import { api, createTestTenant, newTaskId, testDbForFile, type Auth, type FullTestTenant } from "./helpers";

const handle = testDbForFile();
const fixtureDir = "/work/shared/fixtures/real";
const sample = (sdk: string, name: string) => fs.readFileSync(path.join(fixtureDir, sdk, name), "utf8");

type ImportAnswer = {
  task_id: string;
  sdk: string;
  schema_version: string;
  approvals: string[];
  receipts: string[];
  unknown: string[];
  warnings: string[];
};

const importUrl = (taskId: string, extra = "") =>
  `/api/v1/import/openai-agents/run-state?task_id=${encodeURIComponent(taskId)}${extra}`;
function importState(auth: Auth, taskId: string, state: unknown, extra = "") {
  return typeof state === "string"
    ? api(auth).request<ImportAnswer>("POST", importUrl(taskId, extra), { raw: state })
    : api(auth).post<ImportAnswer>(importUrl(taskId, extra), state);
}

async function counts(tenantId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ["events", "side_effects", "approval_requests", "audit_log", "unapplied_receipts"]) {
    const [r] = await queryRows<{ n: string }>(
      handle.db,
      sql`select count(*) as n from ${sql.identifier(table)} where tenant_id = ${tenantId}`,
    );
    out[table] = Number(r!.n);
  }
  return out;
}

async function approvalRows(tenantId: string, taskId: string) {
  return queryRows<{
    id: string;
    tool: string;
    agent: string | null;
    agent_version: string | null;
    payload_digest: string;
    policy_version: string;
    principal: string | null;
    provider_request_id: string | null;
    origin: string;
    call_id: string | null;
  }>(
    handle.db,
    sql`select id::text, tool, agent, agent_version, payload_digest, policy_version, principal, provider_request_id, origin, call_id
        from approval_requests where tenant_id = ${tenantId} and task_id = ${taskId} order by requested_at, id`,
  );
}

let t: FullTestTenant;
beforeAll(async () => {
  t = await createTestTenant(handle.db);
});

async function newTask(): Promise<string> {
  const taskId = newTaskId("import");
  await checkpoint(t, taskId);
  return taskId;
}

describe("import rules", () => {
  it("JS nested agent-as-tool approval (real sample, as a JSON string body): one request, attributed to the nested agent, bound to tool, payload and agent", async () => {
    const taskId = await newTask();
    const res = await importState(
      t.apiKey,
      taskId,
      JSON.stringify(sample("openai-agents-js", "v1.2-nested-approval.json")),
      "&agent_version=outer-2.1",
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      task_id: taskId,
      sdk: "openai-agents-js",
      schema_version: "1.2",
      receipts: [],
      unknown: [],
      warnings: [],
    });
    expect(res.body.approvals).toHaveLength(1);
    const [row] = await approvalRows(t.tenantId, taskId);
    expect(row).toMatchObject({
      id: res.body.approvals[0],
      tool: "secure_tool",
      agent: "NestedAgent",
      agent_version: "outer-2.1",
      payload_digest: toolCallDigest("secure_tool", { text: "sentinel" }),
      origin: "import",
      call_id: "nested-call",
    });
    expect(row!.policy_version).toBeTruthy();
    const effect = await effectRow(handle.db, t.tenantId, taskId, toolCallEffectName("secure_tool", "nested-call"));
    expect(effect?.status).toBe("awaiting_approval");
  });

  it("Python pending approval (real sample, as an object)", async () => {
    const taskId = await newTask();
    const res = await importState(
      t.apiKey,
      taskId,
      JSON.parse(sample("openai-agents-python", "v1_13_pending_tool_approval.json")),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ sdk: "openai-agents-python", schema_version: "1.13", receipts: [], unknown: [] });
    const rows = await approvalRows(t.tenantId, taskId);
    expect(rows.map((r) => [r.tool, r.agent, r.payload_digest])).toEqual([
      ["historical_approval", "compat-agent", toolCallDigest("historical_approval", { account_id: "account-1" })],
    ]);
  });

  it("minimal samples of both SDKs import nothing", async () => {
    const taskId = await newTask();
    for (const [sdk, file] of [
      ["openai-agents-js", "v1.19-minimal.json"],
      ["openai-agents-python", "v1_17.json"],
    ] as const) {
      const before = await counts(t.tenantId);
      const res = await importState(t.apiKey, taskId, sample(sdk, file));
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ sdk, approvals: [], receipts: [], unknown: [] });
      expect(await counts(t.tenantId)).toEqual(before);
    }
  });

  it("a real @openai/agents state: the approval request, the executed tool as a completed receipt; importing it twice creates nothing new", async () => {
    const taskId = await newTask();
    const { json, text } = await pendingApprovalState();
    const first = await importState(t.apiKey, taskId, json);
    expect(first.status, first.text).toBe(200);
    expect(first.body.receipts).toEqual([toolCallEffectName("lookup", "call-lookup-1")]);
    expect(first.body.approvals).toHaveLength(1);
    const receipt = await effectRow(handle.db, t.tenantId, taskId, first.body.receipts[0]!);
    expect(receipt?.status).toBe("completed");
    expect(receipt?.receipt?.external_operation_id).toBe("openai-agents:call:call-lookup-1");
    expect((await approvalRows(t.tenantId, taskId))[0]).toMatchObject({ tool: "publish_report", agent: "reporter" });
    expect((await auditRows(handle.db, t.tenantId, "run_state.imported")).length).toBeGreaterThanOrEqual(1);

    const before = await counts(t.tenantId);
    const again = await importState(t.apiKey, taskId, text);
    expect(again.status, again.text).toBe(200);
    expect(again.body.approvals).toEqual(first.body.approvals);
    expect(again.body.receipts).toEqual(first.body.receipts);
    expect(await counts(t.tenantId)).toEqual(before);
  });

  it("a nested run made by the SDK: attributed to the inner agent", async () => {
    const taskId = await newTask();
    const { json } = await nestedApprovalState();
    const res = await importState(t.apiKey, taskId, json);
    expect(res.status, res.text).toBe(200);
    expect((await approvalRows(t.tenantId, taskId)).map((r) => [r.tool, r.agent])).toEqual([
      ["publish_report", "inner-publisher"],
    ]);
  });

  it("a call with no output in a state that ended mid-turn becomes unknown; outputs pair by call id", async () => {
    const taskId = await newTask();
    const call = (id: string, name: string, args: string) => ({
      type: "tool_call_item",
      agent: { name: "a" },
      raw_item: { type: "function_call", call_id: id, name, arguments: args, id: `fc_${id}` },
    });
    const output = (id: string, out: string) => ({
      type: "tool_call_output_item",
      agent: { name: "a" },
      output: out,
      raw_item: { type: "function_call_output", call_id: id, output: out },
    });
    const state = {
      ...JSON.parse(sample("openai-agents-python", "v1_17.json")),
      current_agent: { name: "a" },
      current_step: { type: "next_step_run_again", data: {} },
      generated_items: [
        call("c1", "send_mail", '{"to":"x"}'),
        call("c2", "charge_card", '{"amount":5}'),
        output("c1", "sent"),
      ],
    };
    const res = await importState(await signInAs(t, "responder"), taskId, state);
    expect(res.status, res.text).toBe(200);
    expect(res.body.receipts).toEqual([toolCallEffectName("send_mail", "c1")]);
    expect(res.body.unknown).toEqual([toolCallEffectName("charge_card", "c2")]);
    expect((await effectRow(handle.db, t.tenantId, taskId, res.body.unknown[0]!))?.status).toBe("unknown");
    const before = await counts(t.tenantId);
    const again = await importState(t.apiKey, taskId, state);
    expect(again.body.unknown).toEqual(res.body.unknown);
    expect(await counts(t.tenantId)).toEqual(before);
  });

  it("a call id listed twice is one request, and the answer reports the duplicate", async () => {
    const taskId = await newTask();
    const s = JSON.parse(sample("openai-agents-python", "v1_13_pending_tool_approval.json"));
    s.current_step.data.interruptions.push(structuredClone(s.current_step.data.interruptions[0]));
    const res = await importState(t.apiKey, taskId, s);
    expect(res.status, res.text).toBe(200);
    expect(res.body.approvals).toHaveLength(1);
    expect(res.body.warnings.join(" ")).toMatch(/listed twice/);
    expect(await approvalRows(t.tenantId, taskId)).toHaveLength(1);
  });

  it("a hosted MCP approval keeps its provider request id", async () => {
    const taskId = await newTask();
    const s = JSON.parse(sample("openai-agents-python", "v1_13_pending_tool_approval.json"));
    s.current_step.data.interruptions = [
      {
        type: "tool_approval_item",
        agent: { name: "compat-agent" },
        raw_item: {
          type: "mcp_approval_request",
          id: "mcpr_abc",
          name: "delete_repo",
          arguments: '{"repo":"x"}',
          server_label: "gitmcp",
        },
      },
    ];
    const res = await importState(t.apiKey, taskId, s);
    expect(res.status, res.text).toBe(200);
    expect((await approvalRows(t.tenantId, taskId))[0]).toMatchObject({
      provider_request_id: "mcpr_abc",
      tool: "gitmcp.delete_repo",
    });
  });
});

describe("refusals write nothing and quote nothing", () => {
  it.each([
    [
      "future JS schema (real sample)",
      () => sample("openai-agents-js", "negative-future-schema.json"),
      "unsupported_schema_version",
      "unsupported_schema_version",
    ],
    [
      "missing $schemaVersion",
      () => {
        const s = JSON.parse(sample("openai-agents-python", "v1_17.json"));
        delete s.$schemaVersion;
        return s;
      },
      "unsupported_schema_version",
      "schema_version_missing",
    ],
    [
      "non-string $schemaVersion",
      () => ({ ...JSON.parse(sample("openai-agents-python", "v1_17.json")), $schemaVersion: 1.17 }),
      "unsupported_schema_version",
      "schema_version_not_string",
    ],
    [
      "a JS-only version in a Python state",
      () => ({ ...JSON.parse(sample("openai-agents-python", "v1_17.json")), $schemaVersion: "1.22" }),
      "unsupported_schema_version",
      "unsupported_schema_version",
    ],
    [
      "constructor key",
      () => {
        const s = JSON.parse(sample("openai-agents-js", "v1.19-minimal.json"));
        s.context.context = { constructor: "sk-planted-secret-123" };
        return s;
      },
      "invalid_run_state",
      "forbidden_key",
    ],
    [
      "__proto__ inside a nested run",
      () => {
        const s = JSON.parse(sample("openai-agents-js", "v1.2-nested-approval.json"));
        const k = Object.keys(s.pendingAgentToolRuns)[0]!;
        s.pendingAgentToolRuns[k] = s.pendingAgentToolRuns[k].replace(
          '"context":{"nested":true}',
          '"context":{"__proto__":{"x":"sk-planted-secret-123"}}',
        );
        return s;
      },
      "invalid_run_state",
      "forbidden_key",
    ],
    [
      "an interruption of no agent of the state",
      () => {
        const s = JSON.parse(sample("openai-agents-js", "v1.2-nested-approval.json"));
        s.pendingAgentToolRuns = {};
        return s;
      },
      "invalid_run_state",
      "unattributed_interruption",
    ],
  ])("%s → 422", async (_label, make, code, problem) => {
    const taskId = await newTask();
    const before = await counts(t.tenantId);
    const res = await importState(t.apiKey, taskId, make());
    expectError(res, 422, code);
    expect((res.body as unknown as { error: { details: { problem: string } } }).error.details.problem).toBe(problem);
    expect(res.text).not.toMatch(/sk-planted-secret|sentinel|HistoricalAgent/);
    expect(await counts(t.tenantId)).toEqual(before);
  });

  it("__proto__ at the top of the body is refused by the body reader (422), nothing stored", async () => {
    const taskId = await newTask();
    const before = await counts(t.tenantId);
    const res = await importState(
      t.apiKey,
      taskId,
      sample("openai-agents-js", "v1.19-minimal.json").replace('"fixture": "minimal"', '"__proto__": {"x": 1}'),
    );
    expect(res.status).toBe(422);
    expect(await counts(t.tenantId)).toEqual(before);
  });

  it("task_id missing → 400; unknown task → 404", async () => {
    const res = await api(t.apiKey).post(
      "/api/v1/import/openai-agents/run-state",
      JSON.parse(sample("openai-agents-python", "v1_17.json")),
    );
    expectError(res, 400, "bad_request");
    expectError(
      await importState(t.apiKey, newTaskId("nope"), sample("openai-agents-python", "v1_17.json")),
      404,
      "not_found",
    );
  });
});

describe("who may import", () => {
  it("viewer and approver → 403, nothing stored; responder, owner, admin and the runtime key may", async () => {
    const taskId = await newTask();
    const state = sample("openai-agents-python", "v1_13_pending_tool_approval.json");
    for (const role of ["viewer", "approver"] as const) {
      const before = await counts(t.tenantId);
      expectError(await importState(await signInAs(t, role), taskId, state), 403, "forbidden");
      expect(await counts(t.tenantId)).toEqual(before);
    }
    for (const role of ["responder", "owner", "admin"] as const) {
      expect((await importState(await signInAs(t, role), taskId, state)).status).toBe(200);
    }
  });

  it("another tenant's task is not found, and nothing is stored in either tenant", async () => {
    const taskId = await newTask();
    const other = await createTestTenant(handle.db, { roles: ["responder"] });
    const before = [await counts(t.tenantId), await counts(other.tenantId)];
    const state = sample("openai-agents-python", "v1_13_pending_tool_approval.json");
    expectError(await importState(other.apiKey, taskId, state), 404, "not_found");
    expectError(await importState(await signInAs(other, "responder"), taskId, state), 404, "not_found");
    expect([await counts(t.tenantId), await counts(other.tenantId)]).toEqual(before);
  });
});
