/**
 * Real `@openai/agents` RunStates for tests, made by the SDK's own loop with a scripted model (no network): each
 * scripted turn answers with the tool calls given for it, then a final message.
 */
import {
  Agent,
  run,
  setTracingDisabled,
  tool,
  Usage,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";
import { z } from "zod";

setTracingDisabled(true);

export type ScriptedCall = { tool: string; args: Record<string, unknown>; callId: string };

/** A model that answers turn k with the calls of `turns[k]` (a final message once they run out). */
export class ScriptedTurnsModel implements Model {
  private turn = 0;
  constructor(private readonly turns: ScriptedCall[][]) {}

  /** The next scripted turn. */
  async getResponse(_request: ModelRequest): Promise<ModelResponse> {
    const calls = this.turns[this.turn];
    this.turn += 1;
    const usage = new Usage({ requests: 1, input_tokens: 0, output_tokens: 0, total_tokens: 0 });
    if (calls && calls.length) {
      return {
        usage,
        responseId: `resp-${this.turn}`,
        output: calls.map((c) => ({
          type: "function_call" as const,
          callId: c.callId,
          name: c.tool,
          arguments: JSON.stringify(c.args),
          status: "completed" as const,
        })),
      };
    }
    return {
      usage,
      responseId: `resp-${this.turn}`,
      output: [
        { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] },
      ],
    };
  }

  /** Not used. */
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("no streaming");
  }
}

/** Tools for the test agents: `lookup` (runs freely) and `publish_report` (needs approval). Counts executions. */
export function testTools(counter: { published: number; looked: number }) {
  const lookup = tool({
    name: "lookup",
    description: "Look a record up.",
    parameters: z.object({ id: z.string() }),
    execute: async ({ id }) => {
      counter.looked += 1;
      return `record ${id}: ok`;
    },
  });
  const publish = tool({
    name: "publish_report",
    description: "Publish the report (needs approval).",
    parameters: z.object({ report: z.string(), channel: z.string() }),
    needsApproval: true,
    execute: async ({ report }) => {
      counter.published += 1;
      return `published ${report}`;
    },
  });
  return { lookup, publish };
}

/** One agent: turn 1 calls lookup and publish_report together → lookup runs, publish_report waits for approval. */
export async function pendingApprovalState() {
  const counter = { published: 0, looked: 0 };
  const { lookup, publish } = testTools(counter);
  const model = new ScriptedTurnsModel([
    [
      { tool: "lookup", args: { id: "R-1" }, callId: "call-lookup-1" },
      { tool: "publish_report", args: { report: "q3.md", channel: "board" }, callId: "call-publish-1" },
    ],
  ]);
  const agent = new Agent({ name: "reporter", instructions: "Publish the report.", model, tools: [lookup, publish] });
  const result = await run(agent, "publish q3");
  return {
    agent,
    result,
    counter,
    json: result.state.toJSON() as unknown as Record<string, unknown>,
    text: result.state.toString(),
  };
}

/** An outer agent whose agent-as-tool runs an inner agent that asks approval for publish_report. */
export async function nestedApprovalState() {
  const counter = { published: 0, looked: 0 };
  const { publish } = testTools(counter);
  const inner = new Agent({
    name: "inner-publisher",
    instructions: "Publish.",
    model: new ScriptedTurnsModel([
      [{ tool: "publish_report", args: { report: "nested.md", channel: "web" }, callId: "inner-call-1" }],
    ]),
    tools: [publish],
  });
  const asTool = inner.asTool({ toolName: "delegate_publish", toolDescription: "Delegate publishing." });
  const outer = new Agent({
    name: "outer-coordinator",
    instructions: "Delegate.",
    model: new ScriptedTurnsModel([
      [{ tool: "delegate_publish", args: { input: "publish nested.md" }, callId: "outer-call-1" }],
    ]),
    tools: [asTool],
  });
  const result = await run(outer, "go");
  return {
    agent: outer,
    result,
    counter,
    json: result.state.toJSON() as unknown as Record<string, unknown>,
    text: result.state.toString(),
  };
}

/** A run that finished: lookup ran, then a final message. */
export async function finishedState() {
  const counter = { published: 0, looked: 0 };
  const { lookup } = testTools(counter);
  const model = new ScriptedTurnsModel([[{ tool: "lookup", args: { id: "R-9" }, callId: "call-lookup-9" }]]);
  const agent = new Agent({ name: "reader", instructions: "Read.", model, tools: [lookup] });
  const result = await run(agent, "read");
  return {
    agent,
    result,
    counter,
    json: result.state.toJSON() as unknown as Record<string, unknown>,
    text: result.state.toString(),
  };
}
