/**
 * Builders for test data shared by the integration and end-to-end suites: random ids, valid events and
 * complete task records. Pure functions, no framework imports.
 */
import { randomBytes } from "node:crypto";
import type { EventInput, TaskRecord } from "@/lib/contract/api";

/** A short random hex suffix for ids, slugs and emails. */
export function rid(bytes = 6): string {
  return randomBytes(bytes).toString("hex");
}

/** A random task id with a readable prefix. */
export function newTaskId(prefix = "task"): string {
  return `${prefix}-${rid()}`;
}

let eventSeq = 0;

/** Event types that must name their attempt (lib/domain/events/schema.ts ATTEMPT_REQUIRED_TYPES). */
const NAMES_ATTEMPT = new Set(["side_effect.intent", "side_effect.receipt", "sandbox.created"]);

/**
 * A valid session event for `taskId` with a random id; any field can be overridden. Types that must name their
 * attempt get attempt 1 unless `over` says otherwise.
 */
export function makeEvent(taskId: string, over: Partial<EventInput> = {}): EventInput {
  eventSeq += 1;
  return {
    id: `ev-${rid()}-${eventSeq}`,
    task_id: taskId,
    plane: "session",
    type: "phase.changed",
    occurred_at: new Date(Date.UTC(2025, 0, 1, 12, 0, eventSeq % 60)).toISOString(),
    attrs: { from: "start", to: "reading" },
    ...(over.type && NAMES_ATTEMPT.has(over.type) && !("attempt" in over) ? { attempt: 1 } : {}),
    ...over,
  };
}

/**
 * A complete, valid task record for `taskId`. Every field is present, so the record the server signs is
 * exactly this object.
 */
export function makeRecord(taskId: string, over: Partial<TaskRecord> = {}): TaskRecord {
  return {
    task_id: taskId,
    principal: "tenant/acme:user/42",
    policy_version: "policy-v1",
    phase: "reading",
    attempt: 1,
    inputs: [{ ref: "s3://inputs/case-918.pdf", sha256: "a".repeat(64) }],
    decisions: [{ id: "d1", summary: "Read the case file first.", at: "2025-01-01T12:00:00.000Z", by: "agent" }],
    artifacts: [{ ref: "s3://out/report.md", sha256: "b".repeat(64), size: 1234, media_type: "text/markdown" }],
    side_effects: {},
    approval: null,
    ...over,
  };
}
