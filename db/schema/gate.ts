/**
 * Gate asks: how often, and when last, a runtime asked a task's resume gate, per sandbox attempt
 * (docs/concepts.md#gate-asks: whether the runtime is alive and polling the gate). One row per (tenant, task, attempt),
 * upserted in one statement per ask by lib/domain/gate/asks.ts. Only asks made with a runtime API key count; a person's
 * page view also evaluates the gate and is not "the runtime asked".
 */
import {
  doublePrecision,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { tasks } from "./tasks";

/** Verdicts a gate ask can record (the gate's `verdict`). */
export const GATE_VERDICTS = ["resume", "replay", "stop"] as const;

export const gateAsks = pgTable(
  "gate_asks",
  {
    tenantId: uuid("tenant_id").notNull(),
    taskId: text("task_id").notNull(),
    /** The task's current sandbox attempt when the runtime asked (0 before any `sandbox.created`). */
    attempt: integer("attempt").notNull(),
    /** Number of runtime asks in this attempt. */
    asks: integer("asks").notNull().default(1),
    firstAskedAt: timestamp("first_asked_at", { withTimezone: true }).notNull().defaultNow(),
    lastAskedAt: timestamp("last_asked_at", { withTimezone: true }).notNull().defaultNow(),
    /** Verdict of the latest ask: resume, replay or stop. */
    lastVerdict: text("last_verdict", { enum: GATE_VERDICTS }).notNull(),
  },
  (t) => [
    primaryKey({ name: "gate_asks_pkey", columns: [t.tenantId, t.taskId, t.attempt] }),
    foreignKey({
      name: "gate_asks_task_fk",
      columns: [t.tenantId, t.taskId],
      foreignColumns: [tasks.tenantId, tasks.taskId],
    }),
  ],
);

/**
 * The definition of each tool a task uses that the server holds as accepted (docs/concepts.md#tool-definitions,
 * decision 0033): set by the first checkpoint that names the tool (trust on first use), and afterwards only by a person
 * accepting a new definition (`POST /api/v1/tasks/{id}/tool-definitions/{tool}/accept`). A definition the runtime
 * reports after `since` (a `tool.definition_changed` event, a checkpoint, a resume body) that differs stops the gate
 * (`tool_definition_changed`) until a person accepts it; a runtime's own checkpoint never does. Tool names are kept in
 * their canonical form (lib/domain/names.ts `canonicalName`).
 */
export const taskToolDefinitions = pgTable(
  "task_tool_definitions",
  {
    tenantId: uuid("tenant_id").notNull(),
    taskId: text("task_id").notNull(),
    /** The tool's canonical name. */
    tool: text("tool").notNull(),
    /** sha256 hex of the accepted definition. */
    digest: text("digest").notNull(),
    /** The server's time from which reports count against this definition. */
    since: timestamp("since", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    /** The definition accepted before this one (null for the first). */
    previousDigest: text("previous_digest"),
    /** Who accepted it (a person's label); null when a checkpoint named it first. */
    acceptedBy: text("accepted_by"),
  },
  (t) => [
    primaryKey({ name: "task_tool_definitions_pkey", columns: [t.tenantId, t.taskId, t.tool] }),
    foreignKey({
      name: "task_tool_definitions_task_fk",
      columns: [t.tenantId, t.taskId],
      foreignColumns: [tasks.tenantId, tasks.taskId],
    }),
  ],
);

/**
 * What writes spent, for the policy's spending limits (decision 0033): one row per write that went (an intent's go)
 * declaring an amount, with the task's principal and the action in canonical form. A write later found not applied
 * stops counting (its effect is no longer in flight, completed or unknown).
 */
export const spendRecords = pgTable(
  "spend_records",
  {
    tenantId: uuid("tenant_id").notNull(),
    taskId: text("task_id").notNull(),
    sideEffect: text("side_effect").notNull(),
    idempotencyKey: text("idempotency_key").notNull(),
    /** The task's principal in canonical form. */
    principal: text("principal").notNull(),
    /** The action in canonical form. */
    action: text("action").notNull(),
    amount: doublePrecision("amount").notNull(),
    currency: text("currency").notNull(),
    spentAt: timestamp("spent_at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "spend_records_pkey", columns: [t.tenantId, t.taskId, t.sideEffect, t.idempotencyKey] }),
    index("spend_records_principal_idx").on(t.tenantId, t.principal, t.action, t.currency, t.spentAt),
    foreignKey({
      name: "spend_records_task_fk",
      columns: [t.tenantId, t.taskId],
      foreignColumns: [tasks.tenantId, tasks.taskId],
    }),
  ],
);
