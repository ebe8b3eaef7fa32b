/**
 * Builders for test data shared by the integration and end-to-end suites: random ids, valid events and
 * complete task records. Pure functions, no framework imports.
 */
import { randomBytes } from "node:crypto";
import type { EventInput, TaskRecord } from "@/lib/contract/api";
import { EVENT_CATALOGUE, type EventType } from "@/lib/domain/events/catalogue";

/** A short random hex suffix for ids, slugs and emails. */
export function rid(bytes = 6): string {
  return randomBytes(bytes).toString("hex");
}

/** A random task id with a readable prefix. */
export function newTaskId(prefix = "task"): string {
  return `${prefix}-${rid()}`;
}

let eventSeq = 0;

/**
 * A valid event for `taskId` with a random id (a session `phase.changed` unless `over` names a type); any field can be
 * overridden. A type of the event catalogue (lib/domain/events/catalogue.ts) gets its plane, and attempt 1 when it
 * must name its attempt, unless `over` says otherwise; other types (`x.` extensions) default to the session plane.
 */
export function makeEvent(taskId: string, over: Partial<EventInput> = {}): EventInput {
  eventSeq += 1;
  const entry =
    over.type !== undefined && Object.hasOwn(EVENT_CATALOGUE, over.type)
      ? EVENT_CATALOGUE[over.type as EventType]
      : undefined;
  return {
    id: `ev-${rid()}-${eventSeq}`,
    task_id: taskId,
    plane: entry?.plane ?? "session",
    type: "phase.changed",
    occurred_at: new Date(Date.UTC(2025, 0, 1, 12, 0, eventSeq % 60)).toISOString(),
    attrs: { from: "start", to: "reading" },
    ...(entry?.attemptRequired && !("attempt" in over) ? { attempt: 1 } : {}),
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
