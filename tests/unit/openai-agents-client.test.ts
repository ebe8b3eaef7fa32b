/**
 * lib/sdk/openai-agents.ts with the real `@openai/agents` loop and a scripted model, against a fake custody API:
 * the paused state is stored and checkpointed, the intent asks for approval, the approval is polled, then the run
 * continues with state.approve / state.reject, and the write happens once with its receipt.
 */
import { Agent, tool } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CustodyApprovals,
  NotAppliedError,
  restoreRunState,
  runWithCustodyApprovals,
  sha256Text,
  toolPayloadDigest,
} from "@/lib/sdk/openai-agents";
import {
  CustodyApiError,
  type ApprovalAnswer,
  type CustodyClient,
  type IntentInput,
  type NotAppliedInput,
  type ReceiptInput,
} from "@/lib/sdk/runtime-client";
import { toolCallDigest } from "@/lib/domain/imports/openai-agents-run-state";
import { ScriptedTurnsModel } from "../support/sdk-run-states";

/** A fake of the three API calls the helper makes; the approval is decided after `pollsBeforeDecision` reads. */
function fakeCustody(decision: "approve" | "reject", pollsBeforeDecision = 2) {
  const calls = { intents: [] as IntentInput[], receipts: [] as Array<ReceiptInput | NotAppliedInput>, polls: 0 };
  let decided = false;
  const client = {
    async intent(_task: string, _name: string, input: IntentInput) {
      calls.intents.push(input);
      if (!decided) throw new CustodyApiError(403, "approval_required", "needs approval", { approval_id: "ap-1" });
      if (decision === "reject") throw new CustodyApiError(403, "approval_rejected", "rejected");
      return { decision: "go" as const, lease_expires_at: new Date(Date.now() + 60_000).toISOString() };
    },
    async getApproval(id: string): Promise<ApprovalAnswer> {
      calls.polls += 1;
      if (calls.polls > pollsBeforeDecision) decided = true;
      if (!decided)
        return {
          id,
          status: calls.polls === 1 ? "pending" : "stale",
          stale_reasons: calls.polls === 1 ? [] : ["policy_changed"],
        };
      return decision === "approve"
        ? { id, status: "approved", decision: { decision: "approve", reason: "ok" } }
        : { id, status: "rejected", decision: { decision: "reject", reason: "wrong channel" } };
    },
    async receipt(_task: string, _name: string, input: ReceiptInput | NotAppliedInput) {
      calls.receipts.push(input);
      return { status: "completed" as const };
    },
  };
  return { client: client as unknown as CustodyClient, calls };
}

function publishingAgent(custody: () => CustodyApprovals, counter: { writes: number }) {
  const publish = tool({
    name: "publish_report",
    description: "Publish the report.",
    parameters: z.object({ report: z.string() }),
    needsApproval: true,
    execute: async ({ report }, _ctx, details) => {
      const out = await custody().write(details?.toolCall?.callId ?? "", async () => {
        counter.writes += 1;
        return { external_operation_id: `pub-${report}`, result_digest: sha256Text(report) };
      });
      return out.replayed ? "already published" : `published ${report}`;
    },
  });
  return new Agent({
    name: "publisher",
    instructions: "Publish.",
    model: new ScriptedTurnsModel([[{ tool: "publish_report", args: { report: "q3.md" }, callId: "call-1" }]]),
    tools: [publish],
  });
}

describe("runWithCustodyApprovals", () => {
  it("stores the paused state, waits through pending and stale, then approves: one write, one receipt", async () => {
    const { client, calls } = fakeCustody("approve");
    const stored: Array<{ ref: string; sha256: string }> = [];
    let texts: string[] = [];
    const custody = new CustodyApprovals({
      client,
      taskId: "t-1",
      attempt: 1,
      agentVersion: "1.0.0",
      pollMs: 1,
      storeState: async (text, sha256) => {
        texts = [...texts, text];
        return `obj://state/${sha256}`;
      },
      checkpointState: async (a) => void stored.push(a),
    });
    const counter = { writes: 0 };
    const agent = publishingAgent(() => custody, counter);
    const result = await runWithCustodyApprovals(agent, "publish", custody);
    expect(result.finalOutput).toBe("done");
    expect(counter.writes).toBe(1);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.sha256).toBe(sha256Text(texts[0]!));
    expect(calls.intents[0]).toMatchObject({
      requires_approval: true,
      mutation: true,
      tool: "publish_report",
      agent: "publisher",
      agent_version: "1.0.0",
      payload: { report: "q3.md" },
    });
    expect(calls.intents[0]!.payload_digest).toBe(toolCallDigest("publish_report", { report: "q3.md" }));
    expect(calls.receipts).toHaveLength(1);
    expect(calls.receipts[0]).toMatchObject({
      external_operation_id: "pub-q3.md",
      idempotency_key: calls.intents[0]!.idempotency_key,
    });
    // The stored state restores with the SDK.
    const restored = await restoreRunState(agent, texts[0]!);
    expect(restored.getInterruptions()).toHaveLength(1);
  });

  it("a rejection rejects the call with the approver's reason: no write", async () => {
    const { client, calls } = fakeCustody("reject", 1);
    const custody = new CustodyApprovals({
      client,
      taskId: "t-2",
      attempt: 1,
      pollMs: 1,
      storeState: async (_t, s) => `obj://${s}`,
      checkpointState: async () => {},
    });
    const counter = { writes: 0 };
    const result = await runWithCustodyApprovals(
      publishingAgent(() => custody, counter),
      "publish",
      custody,
    );
    expect(counter.writes).toBe(0);
    expect(calls.receipts).toEqual([]);
    expect(result.finalOutput).toBe("done");
    const outputs = JSON.stringify(result.newItems.map((i) => i.toJSON()));
    expect(outputs).toMatch(/wrong channel/);
  });

  it("a write without an approved intent is refused", async () => {
    const { client } = fakeCustody("approve");
    const custody = new CustodyApprovals({
      client,
      taskId: "t-3",
      attempt: 1,
      storeState: async () => "x",
      checkpointState: async () => {},
    });
    await expect(
      custody.write("nope", async () => ({ external_operation_id: "x", result_digest: "y" })),
    ).rejects.toThrow(/no approved intent/);
  });

  it("a call the server finds already written under another effect (409 duplicate_payload, completed) is answered from that receipt: no second write (decision 0029)", async () => {
    const { client, calls } = fakeCustody("approve");
    const receipt = {
      external_operation_id: "pub-first",
      result_digest: null,
      completed_at: "2026-01-01T00:00:00.000Z",
    };
    (client as unknown as { intent: (t: string, n: string, i: IntentInput) => Promise<never> }).intent = async (
      _t,
      _n,
      input,
    ) => {
      calls.intents.push(input);
      throw new CustodyApiError(409, "duplicate_payload", "same payload", {
        side_effect: "publish_report.call-0",
        status: "completed",
        receipt,
      });
    };
    const custody = new CustodyApprovals({
      client,
      taskId: "t-4",
      attempt: 1,
      pollMs: 1,
      storeState: async (_t, s) => `obj://${s}`,
      checkpointState: async () => {},
    });
    const counter = { writes: 0 };
    const result = await runWithCustodyApprovals(
      publishingAgent(() => custody, counter),
      "publish",
      custody,
    );
    expect(result.finalOutput).toBe("done");
    expect(counter.writes).toBe(0);
    expect(calls.receipts).toEqual([]);
    expect(JSON.stringify(result.newItems.map((i) => i.toJSON()))).toMatch(/already published/);
  });

  it("a write that fails with NotAppliedError posts a not_applied receipt with the tool's message, then rethrows (decision 0029)", async () => {
    const { client, calls } = fakeCustody("approve", 0);
    const custody = new CustodyApprovals({
      client,
      taskId: "t-5",
      attempt: 2,
      pollMs: 1,
      storeState: async (_t, s) => `obj://${s}`,
      checkpointState: async () => {},
    });
    const item = {
      name: "publish_report",
      arguments: JSON.stringify({ report: "q4.md" }),
      rawItem: { callId: "call-9" },
      agent: { name: "publisher" },
    } as unknown as Parameters<CustodyApprovals["decide"]>[0];
    expect(await custody.decide(item)).toEqual({ decision: "approve" });
    await expect(
      custody.write("call-9", async () => {
        throw new NotAppliedError("422 report rejected: title missing");
      }),
    ).rejects.toThrow(NotAppliedError);
    expect(calls.receipts).toEqual([
      {
        idempotency_key: calls.intents.at(-1)!.idempotency_key,
        outcome: "not_applied",
        error: "422 report rejected: title missing",
        attempt: 2,
      },
    ]);
  });

  it("the client's payload digest is the server's", () => {
    expect(toolPayloadDigest("t", { b: 1, a: [2, "x"] })).toBe(toolCallDigest("t", { a: [2, "x"], b: 1 }));
  });
});
