/**
 * The RunState reader (lib/domain/imports/openai-agents-run-state.ts) on every real sample in
 * ../shared/fixtures/real/openai-agents-{js,python}/ (read, never edited), and on states the real `@openai/agents`
 * SDK makes here with a scripted model. Decision 0013.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  parseRunState,
  RunStateImportError,
  SUPPORTED_SCHEMA_VERSIONS,
  type RunStateProblem,
} from "@/lib/domain/imports/openai-agents-run-state";
import { finishedState, nestedApprovalState, pendingApprovalState } from "../support/sdk-run-states";

const FIXTURES = path.resolve(__dirname, "../../../../shared/fixtures/real");
const fixtureDir = fs.existsSync(FIXTURES) ? FIXTURES : "/work/shared/fixtures/real";
const read = (sdk: string, name: string) => fs.readFileSync(path.join(fixtureDir, sdk, name), "utf8");
const samples = (sdk: string) =>
  fs
    .readdirSync(path.join(fixtureDir, sdk))
    .filter((f) => f.endsWith(".json"))
    .sort();

function refusal(input: unknown): { problem: RunStateProblem; message: string } {
  try {
    parseRunState(input);
  } catch (err) {
    if (err instanceof RunStateImportError) return { problem: err.problem, message: err.message };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("real samples", () => {
  it("covers every sample file of both SDKs", () => {
    expect(samples("openai-agents-js")).toEqual([
      "negative-future-schema.json",
      "v1.19-minimal.json",
      "v1.2-nested-approval.json",
    ]);
    expect(samples("openai-agents-python")).toEqual(["v1_13_pending_tool_approval.json", "v1_17.json"]);
  });

  it("JS negative-future-schema: refused as a future version, payload not quoted", () => {
    const text = read("openai-agents-js", "negative-future-schema.json");
    for (const input of [text, JSON.parse(text)]) {
      const r = refusal(input);
      expect(r.problem).toBe("unsupported_schema_version");
      expect(r.message).toMatch(/99\.0 is newer than/);
      expect(r.message).toMatch(/JavaScript SDK/);
      expect(r.message).not.toMatch(/HistoricalAgent|hello|minimal/);
    }
  });

  it("JS v1.19-minimal: a finished empty run, nothing to import", () => {
    const p = parseRunState(read("openai-agents-js", "v1.19-minimal.json"));
    expect(p).toMatchObject({
      sdk: "openai-agents-js",
      schemaVersion: "1.19",
      currentAgent: "HistoricalAgent",
      approvals: [],
      receipts: [],
      unknown: [],
      warnings: [],
    });
  });

  it("JS v1.2-nested-approval: the nested run's approval, attributed to the nested agent; the outer call waits, not unknown", () => {
    for (const input of [
      read("openai-agents-js", "v1.2-nested-approval.json"),
      JSON.parse(read("openai-agents-js", "v1.2-nested-approval.json")),
    ]) {
      const p = parseRunState(input);
      expect(p.sdk).toBe("openai-agents-js");
      expect(p.schemaVersion).toBe("1.2");
      expect(p.approvals).toEqual([
        {
          callId: "nested-call",
          tool: "secure_tool",
          arguments: { text: "sentinel" },
          agent: "NestedAgent",
          nested: true,
          runtimeDecision: null,
        },
      ]);
      expect(p.receipts).toEqual([]);
      expect(p.unknown).toEqual([]);
      expect(p.warnings).toEqual([]);
    }
  });

  it("JS v1.2-nested-approval without its nested run: the interruption's agent is not in the state → refused", () => {
    const state = JSON.parse(read("openai-agents-js", "v1.2-nested-approval.json"));
    state.pendingAgentToolRuns = {};
    const r = refusal(state);
    expect(r.problem).toBe("unattributed_interruption");
    expect(r.message).not.toMatch(/sentinel|NestedAgent/);
  });

  it("Python v1_13_pending_tool_approval: snake_case, one pending approval by compat-agent", () => {
    const p = parseRunState(read("openai-agents-python", "v1_13_pending_tool_approval.json"));
    expect(p.sdk).toBe("openai-agents-python");
    expect(p.schemaVersion).toBe("1.13");
    expect(p.currentAgent).toBe("compat-agent");
    expect(p.approvals).toEqual([
      {
        callId: "historical-approval-1",
        tool: "historical_approval",
        arguments: { account_id: "account-1" },
        agent: "compat-agent",
        nested: false,
        runtimeDecision: null,
      },
    ]);
    expect(p.receipts).toEqual([]);
    expect(p.unknown).toEqual([]);
  });

  it("Python v1_17: a minimal state, nothing to import", () => {
    const p = parseRunState(read("openai-agents-python", "v1_17.json"));
    expect(p).toMatchObject({
      sdk: "openai-agents-python",
      schemaVersion: "1.17",
      approvals: [],
      receipts: [],
      unknown: [],
      warnings: [],
    });
  });
});

describe("schema versions, read per SDK", () => {
  const js = () => JSON.parse(read("openai-agents-js", "v1.19-minimal.json"));
  const py = () => JSON.parse(read("openai-agents-python", "v1_17.json"));

  it("the sequences differ: 1.22 is a JS version, not (yet) a Python one", () => {
    expect(SUPPORTED_SCHEMA_VERSIONS["openai-agents-js"]).toContain("1.22");
    expect(parseRunState({ ...js(), $schemaVersion: "1.22" }).schemaVersion).toBe("1.22");
    expect(refusal({ ...py(), $schemaVersion: "1.22" }).problem).toBe("unsupported_schema_version");
    expect(refusal({ ...py(), $schemaVersion: "1.22" }).message).toMatch(/Python SDK/);
  });

  it("missing, non-string, malformed, future", () => {
    const { $schemaVersion: _drop, ...noVersion } = js();
    expect(refusal(noVersion).problem).toBe("schema_version_missing");
    expect(refusal({ ...js(), $schemaVersion: 1.19 }).problem).toBe("schema_version_not_string");
    expect(refusal({ ...py(), $schemaVersion: null }).problem).toBe("schema_version_not_string");
    const odd = refusal({ ...js(), $schemaVersion: "sk-secret-value-1234567890" });
    expect(odd.problem).toBe("unsupported_schema_version");
    expect(odd.message).not.toMatch(/secret/);
    expect(refusal({ ...py(), $schemaVersion: "2.0" }).message).toMatch(/newer than/);
  });

  it("a state of neither SDK, or of both key styles, is refused", () => {
    expect(refusal({ $schemaVersion: "1.2", foo: 1 }).problem).toBe("unknown_sdk");
    expect(refusal({ ...js(), current_agent: { name: "x" }, generated_items: [] }).problem).toBe("unknown_sdk");
    expect(refusal("[1,2]").problem).toBe("invalid_run_state");
    expect(refusal("{not json").problem).toBe("invalid_run_state");
  });
});

describe("forbidden keys anywhere", () => {
  it("__proto__ in the JSON text, constructor and prototype in objects, inside nested runs and tool arguments", () => {
    const base = read("openai-agents-js", "v1.19-minimal.json");
    const withProto = base.replace('"fixture": "minimal"', '"__proto__": {"x": 1}');
    expect(withProto).not.toBe(base);
    expect(refusal(withProto).problem).toBe("forbidden_key");
    const withCtor = JSON.parse(base);
    withCtor.context.context = { constructor: { prototype: "secret-payload" } };
    const r = refusal(withCtor);
    expect(r.problem).toBe("forbidden_key");
    expect(r.message).not.toMatch(/secret-payload/);

    const nested = JSON.parse(read("openai-agents-js", "v1.2-nested-approval.json"));
    const key = Object.keys(nested.pendingAgentToolRuns)[0]!;
    nested.pendingAgentToolRuns[key] = nested.pendingAgentToolRuns[key].replace(
      '"context":{"nested":true}',
      '"context":{"constructor":1}',
    );
    expect(refusal(nested).problem).toBe("forbidden_key");

    const args = JSON.parse(read("openai-agents-python", "v1_13_pending_tool_approval.json"));
    args.current_step.data.interruptions[0].raw_item.arguments = '{"__proto__":{"admin":true}}';
    expect(refusal(args).problem).toBe("forbidden_key");
  });
});

describe("pairing and duplicates", () => {
  const py = () => JSON.parse(read("openai-agents-python", "v1_13_pending_tool_approval.json"));

  it("a call id listed twice among the pending approvals is one request, and the import says so", () => {
    const s = py();
    s.current_step.data.interruptions.push(structuredClone(s.current_step.data.interruptions[0]));
    const p = parseRunState(s);
    expect(p.approvals).toHaveLength(1);
    expect(p.warnings.join(" ")).toMatch(/historical-approval-1.*listed twice/);
  });

  it("one call id with two argument sets is refused", () => {
    const s = py();
    s.generated_items[0].raw_item.arguments = '{"account_id":"account-2"}';
    expect(refusal(s).problem).toBe("conflicting_call");
  });

  it("outputs pair with calls by call id, never by position; a call with no output mid-turn is unknown", () => {
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
    const s = {
      ...JSON.parse(read("openai-agents-python", "v1_17.json")),
      current_agent: { name: "a" },
      current_step: { type: "next_step_run_again", data: {} },
      // Outputs listed in the reverse order of their calls; c2 has none.
      generated_items: [
        call("c1", "send_mail", '{"to":"x"}'),
        call("c2", "charge_card", '{"amount":5}'),
        call("c3", "lookup", "{}"),
        output("c3", "found"),
        output("c1", "sent"),
      ],
    };
    const p = parseRunState(s);
    expect(p.receipts).toEqual([
      { callId: "c3", tool: "lookup", arguments: {}, output: "found", agent: "a" },
      { callId: "c1", tool: "send_mail", arguments: { to: "x" }, output: "sent", agent: "a" },
    ]);
    expect(p.unknown).toEqual([{ callId: "c2", tool: "charge_card", arguments: { amount: 5 }, agent: "a" }]);
    // A finished run leaves no unknown call.
    expect(
      parseRunState({ ...s, current_step: { type: "next_step_final_output", data: { output: "ok" } } }).unknown,
    ).toEqual([]);
  });

  it("a hosted MCP approval request keeps its provider request id", () => {
    const s = py();
    s.current_step.data.interruptions = [
      {
        type: "tool_approval_item",
        agent: { name: "compat-agent" },
        raw_item: {
          type: "mcp_approval_request",
          id: "mcpr_123",
          name: "delete_repo",
          arguments: '{"repo":"x"}',
          server_label: "gitmcp",
        },
      },
    ];
    expect(parseRunState(s).approvals).toEqual([
      {
        callId: "mcpr_123",
        tool: "gitmcp.delete_repo",
        arguments: { repo: "x" },
        agent: "compat-agent",
        providerRequestId: "mcpr_123",
        nested: false,
        runtimeDecision: null,
      },
    ]);
    const js = JSON.parse(read("openai-agents-js", "v1.2-nested-approval.json"));
    js.pendingAgentToolRuns = {};
    js.currentStep.data.interruptions = [
      {
        type: "tool_approval_item",
        agent: { name: "OuterAgent" },
        toolName: "search",
        rawItem: {
          type: "hosted_tool_call",
          name: "search",
          id: "mcpr_9",
          status: "in_progress",
          providerData: {
            type: "mcp_approval_request",
            id: "mcpr_9",
            name: "search",
            arguments: "{}",
            server_label: "docs",
          },
        },
      },
    ];
    const pj = parseRunState(js);
    expect(pj.approvals).toEqual([
      {
        callId: "mcpr_9",
        tool: "docs.search",
        arguments: {},
        agent: "OuterAgent",
        providerRequestId: "mcpr_9",
        nested: false,
        runtimeDecision: null,
      },
    ]);
    // The outer call nested_tool had no output and no nested run any more: mid-turn, unknown.
    expect(pj.unknown.map((u) => u.tool)).toEqual(["nested_tool"]);
  });

  it("an interruption naming no agent is refused", () => {
    const s = py();
    delete s.current_step.data.interruptions[0].agent;
    expect(refusal(s).problem).toBe("unattributed_interruption");
  });
});

describe("states made by the real @openai/agents SDK", () => {
  it("a tool with needsApproval: one approval; the tool that ran in the same turn is a receipt; object and string forms agree", async () => {
    const { json, text, counter, result } = await pendingApprovalState();
    expect(result.interruptions).toHaveLength(1);
    expect(counter).toEqual({ published: 0, looked: 1 });
    const p = parseRunState(json);
    expect(p.sdk).toBe("openai-agents-js");
    expect(SUPPORTED_SCHEMA_VERSIONS["openai-agents-js"]).toContain(p.schemaVersion);
    expect(p.approvals).toEqual([
      {
        callId: "call-publish-1",
        tool: "publish_report",
        arguments: { report: "q3.md", channel: "board" },
        agent: "reporter",
        nested: false,
        runtimeDecision: null,
      },
    ]);
    expect(p.receipts).toEqual([
      {
        callId: "call-lookup-1",
        tool: "lookup",
        arguments: { id: "R-1" },
        output: "record R-1: ok",
        agent: "reporter",
      },
    ]);
    expect(p.unknown).toEqual([]);
    expect(parseRunState(text)).toEqual(p);
  });

  it("an agent-as-tool whose inner agent needs approval: attributed to the inner agent", async () => {
    const { json } = await nestedApprovalState();
    const p = parseRunState(json);
    expect(p.approvals).toEqual([
      {
        callId: "inner-call-1",
        tool: "publish_report",
        arguments: { report: "nested.md", channel: "web" },
        agent: "inner-publisher",
        nested: true,
        runtimeDecision: null,
      },
    ]);
    expect(p.unknown).toEqual([]);
  });

  it("a finished run: its tool outputs are receipts, nothing unknown", async () => {
    const { json } = await finishedState();
    const p = parseRunState(json);
    expect(p.approvals).toEqual([]);
    expect(p.receipts).toEqual([
      { callId: "call-lookup-9", tool: "lookup", arguments: { id: "R-9" }, output: "record R-9: ok", agent: "reader" },
    ]);
    expect(p.unknown).toEqual([]);
  });
});
