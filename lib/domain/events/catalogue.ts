/**
 * The catalogue of event types: one entry per type, from which every list of types is derived — the types a runtime
 * may report per plane, the types that must name their attempt, the facts the resume gate reads, the timeline's
 * markers and the types whose transitions move custody (docs/decisions/0023-typed-catalogues.md). Senders may add
 * `x.`-prefixed types of their own; those are stored and shown, and none of these lists holds them.
 *
 * It lives in the domain, not in db/schema/enums.ts: what a type means to the gate, the timeline and custody is domain
 * knowledge, and `db` imports no `lib`. The partial index `events_task_facts_idx` (db/schema/tasks.ts) therefore writes
 * its types out; a unit test holds them equal to {@link TASK_FACT_TYPES}. Pure and free of server imports.
 */
import type { Plane } from "@/db/schema/enums";

/** What the server knows about one event type. */
export type EventTypeEntry = {
  /** The lane it belongs to: an event of this type under another plane is refused (`unknown_type`). */
  plane: Plane;
  /**
   * Whether a runtime may report it (POST /api/v1/events). False for types only the server writes (a runtime's event of
   * that type is refused as `unknown_type`); the server also writes some types a runtime may report.
   */
  runtimeMayReport: boolean;
  /** The event must name its sandbox attempt: it moves side effects, and fencing needs the attempt. */
  attemptRequired: boolean;
  /**
   * How the resume gate reads the type (lib/domain/gate/ask.ts): `rows` — the facts statement ships every event of
   * the type of the task; `probe` — the statement looks events of the type up itself and ships none; null — unread.
   */
  gateFact: "rows" | "probe" | null;
  /**
   * It shapes the timeline at any zoom (interruptions, restarts, resumes, stops, sandbox bars): the overview of a long
   * run carries every event of the type, not only the newest.
   */
  timelineMarker: boolean;
  /**
   * Whether storing it moves custody state (lib/domain/side-effects/from-events.ts): `always` — every stored event of
   * the type runs its transition; `some` — only some do (a mutating `tool.called`, the outcome of a call that became
   * an effect); null — never.
   */
  movesCustody: "always" | "some" | null;
};

/**
 * Every event type, by plane in the order the API lists them (the order of `unknown_type` messages). Each entry
 * answers every question of {@link EventTypeEntry}: a type added without an answer does not compile.
 */
export const EVENT_CATALOGUE = {
  // session
  "task.created": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: "always",
  },
  "phase.changed": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  "checkpoint.saved": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  "compaction.performed": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "rows",
    timelineMarker: false,
    movesCustody: null,
  },
  "constraint.checked": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "rows",
    timelineMarker: false,
    movesCustody: null,
  },
  "decision.recorded": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  "approval.requested": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  "approval.decided": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  "approval.invalidated": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  "run.interrupted": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: true,
    movesCustody: "always",
  },
  "run.resumed": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: true,
    movesCustody: null,
  },
  "run.stopped": {
    plane: "session",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: true,
    movesCustody: "always",
  },
  // environment
  "sandbox.created": {
    plane: "environment",
    runtimeMayReport: true,
    attemptRequired: true,
    gateFact: "rows",
    timelineMarker: true,
    movesCustody: "always",
  },
  "sandbox.replaced": {
    plane: "environment",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "rows",
    timelineMarker: true,
    movesCustody: "always",
  },
  // The runtime verified again, for this attempt, the identity and grants of a sandbox an earlier attempt used (its
  // sandbox id): without it, a new attempt in an earlier attempt's sandbox is a stop (`sandbox_not_fresh`).
  "sandbox.verified": {
    plane: "environment",
    runtimeMayReport: true,
    attemptRequired: true,
    gateFact: "rows",
    timelineMarker: false,
    movesCustody: null,
  },
  "sandbox.destroyed": {
    plane: "environment",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: true,
    movesCustody: "always",
  },
  "snapshot.saved": {
    plane: "environment",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "probe",
    timelineMarker: false,
    movesCustody: null,
  },
  "snapshot.restored": {
    plane: "environment",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "rows",
    timelineMarker: false,
    movesCustody: null,
  },
  "manifest.applied": {
    plane: "environment",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  // tools
  "tool.called": {
    plane: "tools",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: "some",
  },
  "tool.completed": {
    plane: "tools",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: "some",
  },
  "tool.failed": {
    plane: "tools",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: "some",
  },
  "tool.definition_changed": {
    plane: "tools",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "rows",
    timelineMarker: false,
    movesCustody: null,
  },
  "side_effect.intent": {
    plane: "tools",
    runtimeMayReport: true,
    attemptRequired: true,
    gateFact: null,
    timelineMarker: false,
    movesCustody: "always",
  },
  "side_effect.receipt": {
    plane: "tools",
    runtimeMayReport: true,
    attemptRequired: true,
    gateFact: null,
    timelineMarker: false,
    movesCustody: "always",
  },
  "egress.allowed": {
    plane: "tools",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  "egress.denied": {
    plane: "tools",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  // vault
  "credential.issued": {
    plane: "vault",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "rows",
    timelineMarker: false,
    movesCustody: null,
  },
  "credential.attached": {
    plane: "vault",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "rows",
    timelineMarker: false,
    movesCustody: null,
  },
  "credential.used": {
    plane: "vault",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  "credential.revoked": {
    plane: "vault",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "rows",
    timelineMarker: false,
    movesCustody: null,
  },
  "credential.expired": {
    plane: "vault",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: "rows",
    timelineMarker: false,
    movesCustody: null,
  },
  "credential.denied": {
    plane: "vault",
    runtimeMayReport: true,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
  /** The answer of a "Test revocation" check (lib/domain/policies/revocation.ts): the server's evidence only. */
  "credential.revocation_checked": {
    plane: "vault",
    runtimeMayReport: false,
    attemptRequired: false,
    gateFact: null,
    timelineMarker: false,
    movesCustody: null,
  },
} as const satisfies Record<string, EventTypeEntry>;

/** A type of the catalogue (an event's `type` may also be a sender's `x.` extension, which no list holds). */
export type EventType = keyof typeof EVENT_CATALOGUE;

const TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];
const typesWhere = (keep: (e: EventTypeEntry) => boolean): readonly EventType[] =>
  TYPES.filter((t) => keep(EVENT_CATALOGUE[t]));

/** The types a runtime may report, per plane, in catalogue order. */
export const RUNTIME_EVENT_TYPES: Readonly<Record<Plane, readonly EventType[]>> = {
  session: typesWhere((e) => e.runtimeMayReport && e.plane === "session"),
  environment: typesWhere((e) => e.runtimeMayReport && e.plane === "environment"),
  tools: typesWhere((e) => e.runtimeMayReport && e.plane === "tools"),
  vault: typesWhere((e) => e.runtimeMayReport && e.plane === "vault"),
};

/** Types whose events must name their attempt. */
export const ATTEMPT_REQUIRED_TYPES: readonly EventType[] = typesWhere((e) => e.attemptRequired);

/** Types the gate's facts statement ships whole (`gateFact: "rows"`). */
export const GATE_ROW_TYPES: readonly EventType[] = typesWhere((e) => e.gateFact === "rows");

/** Types the timeline overview always carries (`timelineMarker`). */
export const TIMELINE_MARKER_TYPES: readonly EventType[] = typesWhere((e) => e.timelineMarker);

/** Types whose every stored event runs its custody transition (`movesCustody: "always"`). */
export const CUSTODY_ALWAYS_TYPES: readonly EventType[] = typesWhere((e) => e.movesCustody === "always");

/**
 * Types read per task and type through the partial index `events_task_facts_idx`: the gate's facts (rows and probes)
 * and the timeline's markers (which the attempt rules of lib/domain/side-effects/attempts.ts read too). The index's
 * predicate in db/schema/tasks.ts and its latest migration must list exactly these (a unit test checks both).
 * @internal Read by that test only: `db` cannot import it, so the schema writes the list out.
 */
export const TASK_FACT_TYPES: readonly EventType[] = typesWhere((e) => e.gateFact !== null || e.timelineMarker);

/**
 * Types stored in the monthly history partitions that retention drops (decision 0054): the frequent tool traffic and
 * the records of what a run did, none of which a custody rule reads once its task has ended. Every other type is a
 * fact kept as long as its task (sandbox, snapshot and credential lifecycle, egress, tool definitions, interruptions,
 * approvals, …); custom `x.` types are history. The SQL function `custody_event_retention_class` (migration 0034)
 * lists exactly these; a unit test checks.
 */
export const HISTORY_TYPES: readonly EventType[] = [
  "phase.changed",
  "checkpoint.saved",
  "decision.recorded",
  "manifest.applied",
  "tool.called",
  "tool.completed",
  "tool.failed",
  "side_effect.intent",
  "side_effect.receipt",
  "credential.used",
  "credential.denied",
];

/** The partition an event of `type` is stored in: what `custody_event_retention_class(type)` answers in SQL. */
export function retentionClass(type: string): "history" | "fact" {
  return (HISTORY_TYPES as readonly string[]).includes(type) || type.startsWith("x.") ? "history" : "fact";
}
