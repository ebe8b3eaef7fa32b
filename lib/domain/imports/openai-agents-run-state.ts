/**
 * Reads a serialized `RunState` of the OpenAI Agents SDK — the JavaScript SDK (`@openai/agents`, camelCase keys) or
 * the Python SDK (`openai-agents`, snake_case keys) — into what custody needs from it (decision 0013):
 * - `approvals`: pending `tool_approval_item` interruptions of the current step, including those of nested
 *   agent-as-tool runs (the JS SDK keeps them as JSON strings in `pendingAgentToolRuns`), each attributed to the agent
 *   that raised it; a hosted or MCP approval request keeps its provider request id;
 * - `receipts`: tool calls with an output in the state (the tool ran);
 * - `unknown`: tool calls with no output in a state that ended mid-turn (neither pending approval nor waiting for a
 *   nested run): the write may or may not have happened;
 * - `warnings`: what was noticed and tolerated (a call id listed twice in one list is one call; an output with no call).
 *
 * Rules: calls and outputs pair by call id, never by position. Call ids, tool names and the names of agents that raise
 * approvals are names custody keeps and shows: each is held to its boundary limit and to the typed-text rule
 * (lib/domain/names.ts `nameProblem`; credentials refused), and one that breaks it refuses the state naming its path. `$schemaVersion` is read per SDK, since the two
 * sequences differ ({@link SUPPORTED_SCHEMA_VERSIONS}); a missing, non-string, unknown or future version is refused.
 * The keys `__proto__`, `constructor` and `prototype` are refused anywhere (also inside JSON held in strings: nested
 * runs, tool arguments). An interruption that cannot be attributed to an agent of the state is refused (fail closed).
 * Errors ({@link RunStateImportError}) name the problem and never quote the payload.
 *
 * Pure: no database, no Next. Decision 0013.
 */
import { toolCallDigest as canonicalToolCallDigest } from "../crypto/canonical";
import { parseJsonText as parseCheckedJson } from "../json/text";
import { LIMITS, type BoundaryLimit } from "../limits";
import { identifierProblem, nameProblem } from "../names";

export type RunStateSdk = "openai-agents-js" | "openai-agents-python";

/**
 * `$schemaVersion` values each SDK's reader accepts.
 * - JS: `SUPPORTED_SCHEMA_VERSIONS` of `@openai/agents-core` 0.20 (`dist/runState.js`: 1.0 … 1.22, current 1.22).
 * - Python: the versions of the `openai-agents-python` RunState compatibility corpus
 *   (`tests/fixtures/run_state/minimal/v1_0.json` … `v1_19.json`).
 */
export const SUPPORTED_SCHEMA_VERSIONS: Record<RunStateSdk, readonly string[]> = {
  "openai-agents-js": Array.from({ length: 23 }, (_, i) => `1.${i}`),
  "openai-agents-python": Array.from({ length: 20 }, (_, i) => `1.${i}`),
};

export type RunStateProblem =
  | "invalid_run_state"
  | "unknown_sdk"
  | "schema_version_missing"
  | "schema_version_not_string"
  | "unsupported_schema_version"
  | "forbidden_key"
  | "unattributed_interruption"
  | "conflicting_call"
  | "invalid_name"
  | "malformed_decision";

/**
 * A refusal of the whole state. `message` names the problem and never quotes the payload; `path` is the JSON path of
 * the value at fault, when one is.
 */
export class RunStateImportError extends Error {
  constructor(
    readonly problem: RunStateProblem,
    message: string,
    readonly path?: string,
  ) {
    super(message);
    this.name = "RunStateImportError";
  }
}

/** Refuses the state when `value` (at `path`) cannot be a name of this kind (lib/domain/names.ts `nameProblem`). */
function checkName(value: unknown, limit: BoundaryLimit, path: string, where: string): void {
  // Tool names are compared without case: the restricted alphabet of decision 0033.
  const problem = limit === LIMITS.toolName ? identifierProblem(value, limit) : nameProblem(value, limit);
  if (problem) throw new RunStateImportError("invalid_name", `${where}: ${path} ${problem}.`, path);
}

export type RunStateApproval = {
  callId: string;
  tool: string;
  /** The call's arguments, parsed from their JSON text when they are JSON (else the text itself). */
  arguments: unknown;
  /** The agent that raised the interruption. */
  agent: string;
  /** Hosted or MCP approval requests: the provider's request id. */
  providerRequestId?: string;
  /** True when the interruption came from a nested agent-as-tool run. */
  nested: boolean;
  /**
   * What the state's own `context.approvals` records for this call (decision 0032): `rejected` imports as rejected;
   * `approved` is shown as the runtime's record and is not an approval here (the request stays pending). Null: none.
   */
  runtimeDecision: RuntimeDecision | null;
};

/** A decision a RunState records for a call in its `context.approvals`. */
export type RuntimeDecision = "approved" | "rejected";
/** `arguments`: those of the call the output answers (null when the state holds no call for it). */
export type RunStateReceipt = { callId: string; tool: string; arguments: unknown; output: unknown; agent?: string };
export type RunStateUnknown = { callId: string; tool: string; arguments: unknown; agent?: string };

export type ParsedRunState = {
  sdk: RunStateSdk;
  schemaVersion: string;
  currentAgent: string | null;
  approvals: RunStateApproval[];
  receipts: RunStateReceipt[];
  unknown: RunStateUnknown[];
  warnings: string[];
};

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);
/** Nesting allowed in a state document (SDK states nest deeper than event attrs). */
const MAX_STATE_DEPTH = 64;
/** Nested agent-as-tool runs inside nested runs, at most. */
const MAX_NESTED_RUNS_DEPTH = 8;

const SDK_NAME: Record<RunStateSdk, string> = {
  "openai-agents-js": "JavaScript SDK",
  "openai-agents-python": "Python SDK",
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const own = (o: Obj, k: string): unknown => (Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);

/** Parses JSON text with the repo's text checks (depth, exact numbers, `__proto__`, repeated keys). */
function parseJsonText(text: string, what: string): unknown {
  const read = parseCheckedJson(text, MAX_STATE_DEPTH);
  if ("invalid" in read) throw new RunStateImportError("invalid_run_state", `${what} is not valid JSON.`);
  if ("problem" in read) {
    const { problem } = read;
    if (/__proto__/.test(problem.message)) throw forbiddenKey(what);
    throw new RunStateImportError(
      "invalid_run_state",
      `${what} is refused: ${problem.message.replace(/"[^"]*"/g, "a key")}.`,
    );
  }
  return read.value;
}

function forbiddenKey(where: string): RunStateImportError {
  return new RunStateImportError(
    "forbidden_key",
    `${where} holds a key named __proto__, constructor or prototype; such keys are refused anywhere in a RunState.`,
  );
}

/** Throws when a key in FORBIDDEN_KEYS appears anywhere in `value` (explicit stack, no recursion). */
function assertNoForbiddenKeys(value: unknown, where: string): void {
  const stack: unknown[] = [value];
  while (stack.length) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const c of node) if (c !== null && typeof c === "object") stack.push(c);
    } else if (isObj(node)) {
      for (const k of Object.keys(node)) {
        if (FORBIDDEN_KEYS.has(k)) throw forbiddenKey(where);
        const c = node[k];
        if (c !== null && typeof c === "object") stack.push(c);
      }
    }
  }
}

/** A call id or name as it may appear in a warning: plain characters, bounded; else a neutral label. */
function shown(id: string): string {
  return /^[A-Za-z0-9_.:@/-]{1,100}$/.test(id) ? id : "(an id with unusual characters)";
}

/** Which SDK wrote `state` (by its key style); throws when neither or both fit. */
function detectSdk(state: Obj): RunStateSdk {
  const js = ["currentAgent", "currentTurn", "generatedItems", "modelResponses"].filter((k) => k in state).length;
  const py = ["current_agent", "current_turn", "generated_items", "model_responses"].filter((k) => k in state).length;
  if (js >= 2 && py === 0) return "openai-agents-js";
  if (py >= 2 && js === 0) return "openai-agents-python";
  throw new RunStateImportError(
    "unknown_sdk",
    "The document is not a RunState of the OpenAI Agents SDK: expected the JavaScript SDK's camelCase keys (currentAgent, generatedItems, …) or the Python SDK's snake_case keys (current_agent, generated_items, …).",
  );
}

function checkVersion(state: Obj, sdk: RunStateSdk, where: string): string {
  if (!("$schemaVersion" in state)) {
    throw new RunStateImportError(
      "schema_version_missing",
      `${where} has no $schemaVersion; the ${SDK_NAME[sdk]} writes one in every RunState.`,
    );
  }
  const v = state.$schemaVersion;
  if (typeof v !== "string") {
    throw new RunStateImportError(
      "schema_version_not_string",
      `${where}: $schemaVersion must be a string such as "1.2" (got a ${v === null ? "null" : Array.isArray(v) ? "array" : typeof v}).`,
    );
  }
  const supported = SUPPORTED_SCHEMA_VERSIONS[sdk];
  if (!supported.includes(v)) {
    const newest = supported[supported.length - 1]!;
    const m = /^(\d{1,4})\.(\d{1,4})$/.exec(v);
    const label = m ? `$schemaVersion ${v}` : "$schemaVersion (not a version number of the form 1.2)";
    const future = m && (Number(m[1]) > 1 || (Number(m[1]) === 1 && Number(m[2]) > Number(newest.split(".")[1])));
    throw new RunStateImportError(
      "unsupported_schema_version",
      `${where}: ${label} is ${future ? "newer than" : "not one of"} the versions this server reads for the ${SDK_NAME[sdk]} (${supported[0]} to ${newest}); nothing was imported.`,
    );
  }
  return v;
}

/** A key by the JS SDK's camelCase name, as the SDK writes it (snake_case for the Python SDK); dotted paths too. */
function keyOf(sdk: RunStateSdk, camel: string): string {
  return sdk === "openai-agents-js" ? camel : camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Field access by the JS SDK's camelCase name, mapped to snake_case for the Python SDK. */
function fieldReader(sdk: RunStateSdk) {
  return (o: unknown, camel: string): unknown => (isObj(o) ? own(o, keyOf(sdk, camel)) : undefined);
}

/** Raw call item types that are tool calls the runtime executes (hosted tool calls are the provider's). */
const LOCAL_CALL_TYPES = new Set([
  "function_call",
  "computer_call",
  "shell_call",
  "local_shell_call",
  "apply_patch_call",
  "custom_tool_call",
]);
const OUTPUT_TYPES = new Set([
  "function_call_result",
  "function_call_output",
  "computer_call_result",
  "computer_call_output",
  "shell_call_output",
  "local_shell_call_output",
  "apply_patch_call_output",
  "custom_tool_call_output",
]);

type Call = { callId: string; tool: string; arguments: unknown; argsText: string; agent?: string };

/**
 * The payload digest of a tool call, arguments parsed from their JSON text: {@link canonicalToolCallDigest}, the one
 * formula of lib/domain/crypto/canonical.ts.
 */
export const toolCallDigest = canonicalToolCallDigest;

function parseArguments(raw: unknown, where: string): { value: unknown; text: string } {
  if (typeof raw !== "string") {
    if (raw !== undefined) assertNoForbiddenKeys(raw, where);
    return { value: raw ?? null, text: JSON.stringify(raw ?? null) };
  }
  const t = raw.trim();
  if (t.startsWith("{") || t.startsWith("[")) {
    // Not JSON: kept as the text it is. Nested too deep: refused below, as the state itself would be.
    if ("invalid" in parseCheckedJson(t, MAX_STATE_DEPTH)) return { value: raw, text: raw };
    const value = parseJsonText(t, `${where}: the arguments of a tool call`);
    assertNoForbiddenKeys(value, `${where}: the arguments of a tool call`);
    return { value, text: t };
  }
  return { value: raw, text: raw };
}

type Collected = {
  approvals: RunStateApproval[];
  receipts: RunStateReceipt[];
  unknown: RunStateUnknown[];
  warnings: string[];
  agents: Set<string>;
};

/**
 * Parses a serialized RunState.
 * @param input the state as a JSON object, or as the JSON string `RunState.toString()` / `to_json()` produced.
 * @throws RunStateImportError (each problem named; the payload never quoted).
 */
export function parseRunState(input: unknown): ParsedRunState {
  let state: unknown = input;
  if (typeof input === "string") state = parseJsonText(input, "The RunState");
  if (!isObj(state))
    throw new RunStateImportError(
      "invalid_run_state",
      "A RunState must be a JSON object (or a JSON string holding one).",
    );
  assertNoForbiddenKeys(state, "The RunState");
  const sdk = detectSdk(state);
  const schemaVersion = checkVersion(state, sdk, "The RunState");
  const out: Collected = { approvals: [], receipts: [], unknown: [], warnings: [], agents: new Set() };
  readState(state, sdk, out, 0, "The RunState", "");
  const f = fieldReader(sdk);
  const currentAgent = f(f(state, "currentAgent"), "name");
  return {
    sdk,
    schemaVersion,
    currentAgent: typeof currentAgent === "string" ? currentAgent : null,
    approvals: out.approvals,
    receipts: out.receipts,
    unknown: out.unknown,
    warnings: out.warnings,
  };
}

/** Every agent name a state (and its nested runs) knows of: the current agent, item owners, the tool-use tracker. */
function agentsOf(state: Obj, sdk: RunStateSdk): Set<string> {
  const f = fieldReader(sdk);
  const names = new Set<string>();
  const add = (a: unknown) => {
    const n = f(a, "name");
    if (typeof n === "string" && n) names.add(n);
  };
  add(f(state, "currentAgent"));
  for (const list of [
    f(state, "generatedItems"),
    f(state, "sessionItems"),
    f(f(state, "lastProcessedResponse"), "newItems"),
  ]) {
    if (Array.isArray(list)) for (const item of list) add(f(item, "agent"));
  }
  const tracker = f(state, "toolUseTracker");
  if (isObj(tracker)) for (const k of Object.keys(tracker)) if (k) names.add(k);
  return names;
}

/**
 * Collects the approvals, receipts and unknown calls of one state (and its nested runs). `at` is the JSON path of the
 * state inside the document (`""` for the document itself), so refusals name the value at fault.
 */
function readState(state: Obj, sdk: RunStateSdk, out: Collected, depth: number, where: string, at: string): void {
  const f = fieldReader(sdk);
  const k = (camel: string) => keyOf(sdk, camel);
  for (const a of agentsOf(state, sdk)) out.agents.add(a);

  // Nested agent-as-tool runs first (JS SDK): their agents may raise the outer state's interruptions.
  const pendingRuns = f(state, "pendingAgentToolRuns");
  const waitingOnNested = new Set<string>();
  if (isObj(pendingRuns)) {
    for (const [n, [key, text]] of Object.entries(pendingRuns).entries()) {
      const nestedWhere = `A nested agent-as-tool run in pendingAgentToolRuns`;
      if (depth + 1 > MAX_NESTED_RUNS_DEPTH)
        throw new RunStateImportError(
          "invalid_run_state",
          `Nested agent-as-tool runs go deeper than ${MAX_NESTED_RUNS_DEPTH} levels.`,
        );
      if (typeof text !== "string")
        throw new RunStateImportError("invalid_run_state", `${nestedWhere} is not a JSON string.`);
      const nested = parseJsonText(text, nestedWhere);
      if (!isObj(nested)) throw new RunStateImportError("invalid_run_state", `${nestedWhere} is not a JSON object.`);
      assertNoForbiddenKeys(nested, nestedWhere);
      if (detectSdk(nested) !== sdk)
        throw new RunStateImportError("invalid_run_state", `${nestedWhere} was not written by the same SDK.`);
      checkVersion(nested, sdk, nestedWhere);
      const entry = shown(key) === key ? JSON.stringify(key) : `#${n}`;
      readState(nested, sdk, out, depth + 1, nestedWhere, `${at}${k("pendingAgentToolRuns")}[${entry}].`);
      // The key is `<tool>:<call id>` of the outer call that runs the nested agent.
      const sep = key.indexOf(":");
      waitingOnNested.add(sep >= 0 ? key.slice(sep + 1) : key);
    }
  }

  // Calls, by call id (one call however often it is listed), from every list that holds them.
  const calls = new Map<string, Call>();
  const noteCall = (
    raw: unknown,
    agent: string | undefined,
    listName: string,
    seenInList: Set<string>,
    path: string,
  ) => {
    if (!isObj(raw)) return;
    const type = raw.type;
    if (typeof type !== "string" || !LOCAL_CALL_TYPES.has(type)) return;
    const callId = f(raw, "callId");
    if (typeof callId !== "string" || !callId) return;
    checkName(callId, LIMITS.callId, `${path}.${k("callId")}`, where);
    if (typeof raw.name === "string") checkName(raw.name, LIMITS.toolName, `${path}.name`, where);
    const name = typeof raw.name === "string" ? raw.name : type;
    const args = parseArguments(raw.arguments ?? raw.action ?? raw.input, where);
    if (seenInList.has(callId))
      out.warnings.push(
        `Call ${shown(callId)} (${shown(name)}) is listed twice in ${listName}; it was imported as one call.`,
      );
    seenInList.add(callId);
    const prior = calls.get(callId);
    if (prior) {
      if (prior.tool !== name || prior.argsText !== args.text) {
        throw new RunStateImportError(
          "conflicting_call",
          `${where}: one call id is listed with two different tools or argument sets; a state that disagrees with itself is refused.`,
        );
      }
      if (!prior.agent && agent) prior.agent = agent;
      return;
    }
    calls.set(callId, { callId, tool: name, arguments: args.value, argsText: args.text, agent });
  };
  const itemAgent = (item: unknown) => {
    const n = f(f(item, "agent"), "name");
    return typeof n === "string" && n ? n : undefined;
  };
  const itemLists: Array<[string, unknown]> = [
    ["generatedItems", f(state, "generatedItems")],
    ["sessionItems", f(state, "sessionItems")],
    ["lastProcessedResponse.newItems", f(f(state, "lastProcessedResponse"), "newItems")],
  ];
  for (const [listName, list] of itemLists) {
    if (!Array.isArray(list)) continue;
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (f(item, "type") === "tool_call_item")
        noteCall(f(item, "rawItem"), itemAgent(item), listName, seen, `${at}${k(listName)}[${i}].${k("rawItem")}`);
    });
  }
  const responses = f(state, "modelResponses");
  if (Array.isArray(responses)) {
    responses.forEach((r, ri) => {
      const output = f(r, "output");
      if (!Array.isArray(output)) return;
      const seen = new Set<string>();
      output.forEach((raw, oi) =>
        noteCall(raw, undefined, "a model response", seen, `${at}${k("modelResponses")}[${ri}].output[${oi}]`),
      );
    });
  }

  // Outputs, by call id.
  const outputs = new Map<string, { output: unknown; name?: string; agent?: string }>();
  for (const [listName, list] of itemLists) {
    if (!Array.isArray(list)) continue;
    const seen = new Set<string>();
    for (const [i, item] of list.entries()) {
      if (f(item, "type") !== "tool_call_output_item") continue;
      const raw = f(item, "rawItem");
      if (!isObj(raw) || typeof raw.type !== "string" || !OUTPUT_TYPES.has(raw.type)) continue;
      const callId = f(raw, "callId");
      if (typeof callId !== "string" || !callId) continue;
      const path = `${at}${k(listName)}[${i}].${k("rawItem")}`;
      checkName(callId, LIMITS.callId, `${path}.${k("callId")}`, where);
      if (typeof raw.name === "string") checkName(raw.name, LIMITS.toolName, `${path}.name`, where);
      if (seen.has(callId))
        out.warnings.push(`The output of call ${shown(callId)} is listed twice in ${listName}; it was imported once.`);
      seen.add(callId);
      if (outputs.has(callId)) continue;
      const output = f(item, "output") ?? raw.output;
      outputs.set(callId, {
        output: output ?? null,
        name: typeof raw.name === "string" ? raw.name : undefined,
        agent: itemAgent(item),
      });
    }
  }

  // Decisions the state records (its context's approvals), read strictly: a malformed one refuses the state.
  const decisions = readDecisions(f(f(state, "context"), "approvals"), `${at}context.approvals`, where);

  // Pending interruptions of the current step.
  const step = f(state, "currentStep");
  const pendingApproval = new Set<string>();
  if (f(step, "type") === "next_step_interruption") {
    const interruptions = f(f(step, "data"), "interruptions");
    if (Array.isArray(interruptions)) {
      const seen = new Set<string>();
      for (const [i, item] of interruptions.entries()) {
        const type = f(item, "type");
        if (type !== "tool_approval_item" && type !== "mcp_approval_request_item") continue;
        const path = `${at}${k("currentStep")}.data.interruptions[${i}]`;
        const approval = readApproval(item, sdk, where, path);
        const agent = itemAgent(item);
        if (agent) checkName(agent, LIMITS.agentName, `${path}.agent.name`, where);
        if (!agent || !out.agents.has(agent)) {
          throw new RunStateImportError(
            "unattributed_interruption",
            `${where}: a pending approval (tool ${shown(approval.tool)}) names ${agent ? "an agent that does not appear in the state" : "no agent"}; an approval that cannot be attributed to an agent of the run is refused, not dropped.`,
          );
        }
        if (seen.has(approval.callId)) {
          out.warnings.push(
            `Call ${shown(approval.callId)} (${shown(approval.tool)}) is listed twice among the pending approvals; it was imported as one request.`,
          );
          continue;
        }
        seen.add(approval.callId);
        pendingApproval.add(approval.callId);
        const existing = out.approvals.find((a) => a.callId === approval.callId);
        if (existing) {
          // The same approval surfaced by a nested run and by its parent: one request, from the agent that raised it.
          if (
            existing.tool !== approval.tool ||
            JSON.stringify(existing.arguments) !== JSON.stringify(approval.arguments)
          ) {
            throw new RunStateImportError(
              "conflicting_call",
              `${where}: one call id is pending approval with two different tools or argument sets; refused.`,
            );
          }
          continue;
        }
        if (outputs.has(approval.callId) || out.receipts.some((r) => r.callId === approval.callId))
          throw new RunStateImportError(
            "conflicting_call",
            `${where}: ${path} is pending approval, but the state also holds an output of that call (it ran): a call both executed and pending approval is refused.`,
            path,
          );
        out.approvals.push({
          ...approval,
          agent,
          nested: depth > 0,
          runtimeDecision: decisionOf(decisions, approval.tool, approval.callId, where),
        });
      }
    }
  }

  // Pair outputs with calls by call id.
  for (const [callId, o] of outputs) {
    const call = calls.get(callId);
    if (!call)
      out.warnings.push(
        `An output for call ${shown(callId)} has no tool call in the state; it was recorded under the tool it names.`,
      );
    if (out.receipts.some((r) => r.callId === callId)) continue;
    out.receipts.push({
      callId,
      tool: call?.tool ?? o.name ?? "unknown_tool",
      arguments: call ? call.arguments : null,
      output: o.output,
      agent: call?.agent ?? o.agent,
    });
  }

  const finished = f(step, "type") === "next_step_final_output";
  if (!finished) {
    for (const call of calls.values()) {
      if (outputs.has(call.callId) || pendingApproval.has(call.callId) || waitingOnNested.has(call.callId)) continue;
      if (out.approvals.some((a) => a.callId === call.callId)) continue;
      if (out.unknown.some((u) => u.callId === call.callId) || out.receipts.some((r) => r.callId === call.callId))
        continue;
      out.unknown.push({ callId: call.callId, tool: call.tool, arguments: call.arguments, agent: call.agent });
    }
  }
}

/** One tool's record in `context.approvals`: booleans (every call of the tool) or lists of call ids. */
type DecisionRecord = { approved: boolean | string[]; rejected: boolean | string[]; path: string };

/**
 * Reads a state's `context.approvals` — `{<tool name>: {approved: boolean | call id[], rejected: boolean | call id[]}}`,
 * as both SDKs write it — refusing anything else with the path of the item at fault (`malformed_decision`): a record
 * that is not an object, a value that is neither a boolean nor a list of call ids, a call id that breaks the name rule,
 * or a call both approved and rejected.
 */
function readDecisions(raw: unknown, path: string, where: string): Map<string, DecisionRecord> {
  const out = new Map<string, DecisionRecord>();
  if (raw === undefined || raw === null) return out;
  const bad = (at: string, what: string) =>
    new RunStateImportError(
      "malformed_decision",
      `${where}: ${at} ${what}; a decision the state records must be read exactly, so the state is refused.`,
      at,
    );
  if (!isObj(raw)) throw bad(path, "is not an object of tool names to approval records");
  for (const [tool, record] of Object.entries(raw)) {
    const at = `${path}[${shown(tool) === tool ? JSON.stringify(tool) : "(a tool name with unusual characters)"}]`;
    checkName(tool, LIMITS.toolName, at, where);
    if (!isObj(record)) throw bad(at, "is not an approval record {approved, rejected}");
    const side = (key: "approved" | "rejected"): boolean | string[] => {
      const v = own(record, key);
      if (v === undefined) return [];
      if (typeof v === "boolean") return v;
      if (!Array.isArray(v)) throw bad(`${at}.${key}`, "is neither true/false nor a list of call ids");
      v.forEach((id, i) => {
        if (typeof id !== "string" || !id) throw bad(`${at}.${key}[${i}]`, "is not a call id");
        checkName(id, LIMITS.callId, `${at}.${key}[${i}]`, where);
      });
      return v as string[];
    };
    const approved = side("approved");
    const rejected = side("rejected");
    if (approved === true && rejected === true) throw bad(at, "approves and rejects every call of the tool");
    if (Array.isArray(approved) && Array.isArray(rejected)) {
      const both = approved.find((id) => rejected.includes(id));
      if (both !== undefined) throw bad(at, `both approves and rejects call ${shown(both)}`);
    }
    out.set(tool, { approved, rejected, path: at });
  }
  return out;
}

/** What the state's decisions say of one call (the SDKs' reading: a whole-tool decision, then the call's own). */
function decisionOf(
  decisions: Map<string, DecisionRecord>,
  tool: string,
  callId: string,
  where: string,
): RuntimeDecision | null {
  const r = decisions.get(tool);
  if (!r) return null;
  const approved = r.approved === true || (Array.isArray(r.approved) && r.approved.includes(callId));
  const rejected = r.rejected === true || (Array.isArray(r.rejected) && r.rejected.includes(callId));
  if (approved && rejected)
    throw new RunStateImportError(
      "malformed_decision",
      `${where}: ${r.path} both approves and rejects call ${shown(callId)}; the state is refused.`,
      r.path,
    );
  return approved ? "approved" : rejected ? "rejected" : null;
}

function readApproval(
  item: unknown,
  sdk: RunStateSdk,
  where: string,
  path: string,
): Omit<RunStateApproval, "agent" | "nested" | "runtimeDecision"> {
  const f = fieldReader(sdk);
  const rawPath = `${path}.${keyOf(sdk, "rawItem")}`;
  const raw = f(item, "rawItem");
  if (!isObj(raw))
    throw new RunStateImportError("invalid_run_state", `${where}: a pending approval has no raw tool call.`);
  const provider = isObj(raw.providerData) ? raw.providerData : undefined;
  const hosted =
    raw.type === "mcp_approval_request" || provider?.type === "mcp_approval_request" || raw.type === "hosted_tool_call";
  if (hosted) {
    const id =
      (provider && typeof provider.id === "string" && provider.id) || (typeof raw.id === "string" && raw.id) || "";
    if (!id)
      throw new RunStateImportError(
        "invalid_run_state",
        `${where}: a hosted or MCP approval request has no provider request id.`,
      );
    const name =
      (provider && typeof provider.name === "string" && provider.name) ||
      (typeof raw.name === "string" && raw.name) ||
      "hosted_tool";
    const server =
      (provider && typeof provider.server_label === "string" && provider.server_label) ||
      (typeof raw.server_label === "string" && raw.server_label) ||
      "";
    const args = parseArguments(provider?.arguments ?? raw.arguments, where);
    const via = provider && typeof provider.id === "string" && provider.id ? `${rawPath}.providerData` : rawPath;
    checkName(id, LIMITS.callId, `${via}.id`, where);
    const tool = server ? `${server}.${name}` : name;
    checkName(tool, LIMITS.toolName, `${via}.${server ? "server_label and name" : "name"}`, where);
    return { callId: id, tool, arguments: args.value, providerRequestId: id };
  }
  const callId = f(raw, "callId") ?? raw.id;
  if (typeof callId !== "string" || !callId)
    throw new RunStateImportError("invalid_run_state", `${where}: a pending approval has no call id.`);
  checkName(callId, LIMITS.callId, `${rawPath}.${f(raw, "callId") === undefined ? "id" : keyOf(sdk, "callId")}`, where);
  const toolName = f(item, "toolName");
  const name = typeof toolName === "string" && toolName ? toolName : typeof raw.name === "string" ? raw.name : "";
  if (!name) throw new RunStateImportError("invalid_run_state", `${where}: a pending approval names no tool.`);
  checkName(
    name,
    LIMITS.toolName,
    typeof toolName === "string" && toolName ? `${path}.${keyOf(sdk, "toolName")}` : `${rawPath}.name`,
    where,
  );
  const args = parseArguments(raw.arguments, where);
  return { callId, tool: name, arguments: args.value };
}
