/**
 * The demo's agent: an `@openai/agents` Agent run by the SDK's own loop (`run()`), with a scripted `Model`
 * (no network) that calls the tools of a plan in order, and three real tools whose work is done by a
 * {@link ToolHost} (the runtime: files, HTTP, custody API).
 */
import {
  Agent,
  run,
  setTracingDisabled,
  tool,
  Usage,
  type AgentInputItem,
  type FunctionTool,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";
import canonicalize from "canonicalize";
import { runWithCustodyApprovals, type CustodyApprovals } from "@/lib/sdk/openai-agents";
import { z } from "zod";
import { sha256Hex } from "./documents";

setTracingDisabled(true);

export type ReportPart = "first_half" | "second_half";

/** One tool call the scripted model will make. */
export type PlannedCall =
  | { tool: "read_document"; args: { path: string } }
  | { tool: "update_record"; args: { record_id: string; status: string } }
  | { tool: "write_report"; args: { part: ReportPart } }
  | { tool: "publish_report"; args: PublishArgs };

/** Arguments of publish_report (fixed by the demo, so its approval binds one payload digest). */
export type PublishArgs = { report: string; channel: string };

/** What the tools need from the runtime. Each method returns the model-visible result (JSON-able). */
export type ToolHost = {
  readDocument(args: { path: string }, callId: string): Promise<Record<string, unknown>>;
  updateRecord(args: { record_id: string; status: string }, callId: string): Promise<Record<string, unknown>>;
  writeReport(args: { part: ReportPart }, callId: string): Promise<Record<string, unknown>>;
  /** publish_report: runs only after an approver's decision (the tool needs approval). */
  publishReport(args: PublishArgs, callId: string): Promise<Record<string, unknown>>;
  /** Called before every model turn; throws to end the run (e.g. the sandbox is gone). */
  beforeTurn(): void;
};

const callIdOf = (details: { toolCall?: { callId?: string } } | undefined, fallback: string) =>
  details?.toolCall?.callId ?? fallback;

/** Builds the four tools (publish_report needs approval). Errors propagate to the runtime (`errorFunction: null`): they are not model input. */
export function buildTools(host: ToolHost): FunctionTool[] {
  const readDocument = tool({
    name: "read_document",
    description: "Read a case document from the workspace and return its object reference, size and sha256.",
    parameters: z.object({ path: z.string().describe("workspace-relative file name, e.g. case-918.pdf") }),
    errorFunction: null,
    execute: async (args, _ctx, details) =>
      JSON.stringify(await host.readDocument(args, callIdOf(details, "read_document"))),
  });
  const updateRecord = tool({
    name: "update_record",
    description: "Set the status of a record in the records system (an external write, made once per idempotency key).",
    parameters: z.object({
      record_id: z.string().describe("record id in the records system"),
      status: z.string().describe("new status, e.g. reviewed"),
    }),
    errorFunction: null,
    execute: async (args, _ctx, details) =>
      JSON.stringify(await host.updateRecord(args, callIdOf(details, "update_record"))),
  });
  const writeReport = tool({
    name: "write_report",
    description:
      "Write report.md in the workspace: the first half, or append the second half; registers it as an artifact.",
    parameters: z.object({ part: z.enum(["first_half", "second_half"]) }),
    errorFunction: null,
    execute: async (args, _ctx, details) =>
      JSON.stringify(await host.writeReport(args, callIdOf(details, "write_report"))),
  });
  const publishReport = tool({
    name: "publish_report",
    description:
      "Publish report.md to the records system's report channel (an external write that needs an approver's decision).",
    parameters: z.object({
      report: z.string().describe("workspace file to publish"),
      channel: z.string().describe("records channel"),
    }),
    needsApproval: true,
    errorFunction: null,
    execute: async (args, _ctx, details) =>
      JSON.stringify(await host.publishReport(args, callIdOf(details, "publish_report"))),
  });
  return [readDocument, updateRecord, writeReport, publishReport] as unknown as FunctionTool[];
}

/**
 * sha256 of each tool's definition as the model sees it (name, description, JSON schema of the parameters,
 * strict flag), over RFC 8785 JSON. Feeds the task record's `tool_definitions` and the resume gate.
 */
export function toolDefinitionDigests(tools: FunctionTool[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of tools) {
    const text = canonicalize({
      type: "function",
      name: t.name,
      description: t.description,
      parameters: t.parameters,
      strict: t.strict,
    });
    if (text === undefined) throw new Error(`tool ${t.name} has no canonical definition`);
    out[t.name] = sha256Hex(text);
  }
  return out;
}

const isResult = (item: AgentInputItem) => (item as { type?: string }).type === "function_call_result";

/**
 * A model that needs no network: turn k calls the k-th tool of the plan (k = number of tool results already
 * in the conversation), then answers with `finalText`.
 */
export class ScriptedModel implements Model {
  private turn = 0;

  constructor(
    private readonly plan: PlannedCall[],
    private readonly finalText: string,
    private readonly callPrefix: string,
    private readonly beforeTurn: () => void,
  ) {}

  /** Next scripted step for the conversation so far. */
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.beforeTurn();
    this.turn += 1;
    const items = Array.isArray(request.input) ? request.input : [];
    const done = items.filter(isResult).length;
    const next = this.plan[done];
    const usage = new Usage({ requests: 1, input_tokens: 0, output_tokens: 0, total_tokens: 0 });
    const responseId = `${this.callPrefix}-r${this.turn}`;
    if (next) {
      return {
        usage,
        responseId,
        output: [
          {
            type: "function_call",
            callId: `${this.callPrefix}-c${done + 1}`,
            name: next.tool,
            arguments: JSON.stringify(next.args),
            status: "completed",
          },
        ],
      };
    }
    return {
      usage,
      responseId,
      output: [
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: this.finalText }],
        },
      ],
    };
  }

  /** Streaming is not used by the demo. */
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("ScriptedModel does not stream");
  }
}

/**
 * Runs the agent over `plan` with the SDK's loop.
 * @returns the final text of the agent.
 * @throws whatever a tool or `host.beforeTurn` throws.
 */
export async function runAgent(opts: {
  tools: FunctionTool[];
  host: ToolHost;
  plan: PlannedCall[];
  input: string;
  finalText: string;
  callPrefix: string;
  /** Settles approval pauses (tools with needsApproval) through custody; without it a pause is an error. */
  custody?: CustodyApprovals;
}): Promise<string> {
  const model = new ScriptedModel(opts.plan, opts.finalText, opts.callPrefix, () => opts.host.beforeTurn());
  const agent = new Agent({
    name: "doc-processor",
    instructions:
      "You process one case file: read the document, update the case record once, write report.md in two halves, then publish it once approved.",
    model,
    tools: opts.tools,
  });
  const runOptions = { maxTurns: opts.plan.length + 2 };
  const result = opts.custody
    ? await runWithCustodyApprovals(agent, opts.input, opts.custody, runOptions)
    : await run(agent, opts.input, runOptions);
  if (result.interruptions?.length)
    throw new Error(
      `the run paused for approval of ${result.interruptions.map((i) => i.name).join(", ")} and no custody helper settles it`,
    );
  return String(result.finalOutput ?? "");
}
