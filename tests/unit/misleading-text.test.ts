/**
 * Text that misleads a person, as pure rules: the RunState reader holds call ids, tool names and the agents of
 * approvals to the rule of names (lib/domain/names.ts) and names the path of a refused one; an approval's reason keeps
 * its lines but refuses what disguises it; the Markdown export of a map folds every line ending and escapes line starts,
 * so a field can never add a heading, a list item, a quote, a fence or a table row.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { CustodyMapJson } from "@/lib/contract/maps";
import { decisionBodySchema } from "@/lib/domain/approvals/decide";
import { parseRunState, RunStateImportError } from "@/lib/domain/imports/openai-agents-run-state";
import { MAP_LAYERS } from "@/lib/domain/maps/layers";
import { cell, mapToMarkdown } from "@/lib/domain/maps/markdown";

const FIXTURES = path.resolve(__dirname, "../../../../shared/fixtures/real");
const fixtureDir = fs.existsSync(FIXTURES) ? FIXTURES : "/work/shared/fixtures/real";
const read = (sdk: string, name: string) => fs.readFileSync(path.join(fixtureDir, sdk, name), "utf8");

function refusal(input: unknown): RunStateImportError {
  try {
    parseRunState(input);
  } catch (err) {
    if (err instanceof RunStateImportError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("RunState names", () => {
  /** The Python sample with its tool and agent renamed everywhere. */
  const py = (tool: string, agent = "compat-agent") =>
    JSON.parse(
      read("openai-agents-python", "v1_13_pending_tool_approval.json")
        .replaceAll('"historical_approval"', JSON.stringify(tool))
        .replaceAll('"compat-agent"', JSON.stringify(agent)),
    );
  /** A JS state that ended mid-turn with one call of `tool` under `callId`. */
  const js = (callId: string, tool = "charge_card") => ({
    ...JSON.parse(read("openai-agents-js", "v1.19-minimal.json")),
    currentStep: { type: "next_step_run_again" },
    generatedItems: [
      {
        type: "tool_call_item",
        agent: { name: "HistoricalAgent" },
        rawItem: { type: "function_call", callId, name: tool, arguments: "{}" },
      },
    ],
  });

  it("reads plain names as before", () => {
    expect(parseRunState(js("call-1")).unknown).toEqual([
      { callId: "call-1", tool: "charge_card", arguments: {}, agent: "HistoricalAgent" },
    ]);
  });

  it.each([
    ["a call id past 200 characters", () => js("c".repeat(201)), "generatedItems[0].rawItem.callId", /too long \(201/],
    ["a bidi override in a tool name", () => js("call-1", "pay\u202eout"), "generatedItems[0].rawItem.name", /U\+202E/],
    [
      "an AWS key as a tool name",
      () => py("AKIAIOSFODNN7EXAMPLE"),
      "generated_items[0].raw_item.name",
      /credential value \(aws_access_key_id\)/,
    ],
    [
      "a bearer token in a pending approval's tool name",
      () => {
        const s = py("publish_report");
        s.current_step.data.interruptions[0].tool_name = "Bearer abcdefghijklmnop1234";
        return s;
      },
      "current_step.data.interruptions[0].tool_name",
      /credential value \(bearer_token\)/,
    ],
    [
      "ESC in the agent of an approval",
      () => py("publish_report", "agent\u001b[31m"),
      "current_step.data.interruptions[0].agent.name",
      /U\+001B/,
    ],
    ["a zero-width space in a call id", () => js("call\u200b1"), "generatedItems[0].rawItem.callId", /U\+200B/],
  ])("refuses %s, naming its path and never quoting it", (_name, state, at, why) => {
    const err = refusal(state());
    expect(err.problem).toBe("invalid_name");
    expect(err.path).toBe(at);
    expect(err.message).toMatch(why);
    expect(err.message).not.toMatch(/AKIA|abcdefghijklmnop|cccc/);
  });
});

describe("an approval decision's reason", () => {
  it("keeps several lines and refuses what disguises it", () => {
    expect(
      decisionBodySchema.safeParse({ decision: "reject", reason: "Not now.\r\n\tAsk after the audit." }).success,
    ).toBe(true);
    for (const [cp, ch] of [
      ["U+202E", "\u202e"],
      ["U+001B", "\u001b"],
      ["U+0007", "\u0007"],
      ["U+200B", "\u200b"],
      ["U+2028", "\u2028"],
    ]) {
      const r = decisionBodySchema.safeParse({ decision: "approve", reason: `looks ${ch}fine` });
      expect(r.success, cp).toBe(false);
      expect(r.error!.issues[0]!.path).toEqual(["reason"]);
      expect(r.error!.issues[0]!.message).toContain(cp);
    }
  });
});

describe("the Markdown export", () => {
  const map = (fields: Partial<CustodyMapJson["layers"][number]>): CustodyMapJson => ({
    id: "00000000-0000-4000-8000-000000000001",
    workflow: "docs",
    title: "Map",
    version: 1,
    status: "draft",
    layers: MAP_LAYERS.map((layer, i) => ({
      layer,
      revision: 1,
      custodians: [],
      handoff: "",
      evidence: "",
      recovery_path: "",
      acceptance_question: "",
      verification: "unknown",
      verification_evidence: null,
      decision: null,
      decision_note: "",
      ...(i === 0 ? fields : {}),
    })),
  });
  /** The document's lines as a CommonMark renderer (or a looser one) splits them. */
  const linesOf = (md: string) => md.split(/\r\n|[\n\r\u2028\u2029\u0085\v\f]/);

  it.each([
    ["LF", "\n"],
    ["CR", "\r"],
    ["CRLF", "\r\n"],
    ["U+2028", "\u2028"],
    ["U+2029", "\u2029"],
    ["NEL", "\u0085"],
  ])("a field with %s line breaks adds no heading, list item, quote, fence or table row", (_name, br) => {
    const planted = [
      "Checkpoint id",
      "# Injected heading",
      "- Verification: verified",
      "* item",
      "+ item",
      "> quote",
      "1. first",
      "2) second",
      "```",
      "~~~",
      "===",
      "---",
      "| a | b |",
      "|---|---|",
      "    indented code",
      "<h1>html</h1>",
      "[x]: https://example.com",
    ].join(br);
    const md = mapToMarkdown(
      map({ evidence: planted, handoff: planted, decision: "constrain", decision_note: planted }),
    );
    const lines = linesOf(md);
    expect(lines.filter((l) => /^ {0,3}#/.test(l))).toHaveLength(3 + MAP_LAYERS.length);
    expect(lines.filter((l) => /^ {0,3}[-*+] Verification:/.test(l))).toHaveLength(MAP_LAYERS.length);
    expect(lines.filter((l) => /^ {0,3}\|/.test(l))).toHaveLength(2 + MAP_LAYERS.length);
    for (const l of lines) {
      expect(l).not.toMatch(/^ {0,3}(>|```|~~~|===|---|\d+[.)] |[*+] |<|\[x\]:)/);
      expect(l).not.toMatch(/^ {4}/);
    }
    expect(md).toContain("\\# Injected heading");
    expect(md).not.toMatch(/(^|[^\\])<h1>/);
  });

  it("keeps the table a table: pipes escaped, lines joined by <br>", () => {
    expect(cell("a | b\nc")).toBe("a \\| b<br>c");
    expect(cell("a\rb\r\nc\u2028d")).toBe("a<br>b<br>c<br>d");
    expect(cell("  ")).toBe("—");
    expect(cell("x\r| a | b |")).toBe("x<br>\\| a \\| b \\|");
  });
});
