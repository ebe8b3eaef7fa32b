/**
 * Closed vocabularies shared by the database, zod schemas and the UI.
 * Source: DESIGN.md "Core concepts".
 */
import { pgEnum } from "drizzle-orm/pg-core";

export const ROLES = ["owner", "approver", "responder", "viewer", "admin"] as const;
export type Role = (typeof ROLES)[number];

export const PLANES = ["session", "environment", "tools", "vault"] as const;
export type Plane = (typeof PLANES)[number];

/** Side-effect lifecycle (DESIGN.md "Side effect"). */
export const SIDE_EFFECT_STATUSES = [
  "not_started",
  "awaiting_approval",
  "approved",
  "in_flight",
  "completed",
  "failed",
  "unknown",
] as const;
export type SideEffectStatus = (typeof SIDE_EFFECT_STATUSES)[number];

/** Event types per plane (DESIGN.md "Event types per plane"); senders may add `x.`-prefixed types. */
export const EVENT_TYPES: Record<Plane, readonly string[]> = {
  session: [
    "task.created",
    "phase.changed",
    "checkpoint.saved",
    "compaction.performed",
    "constraint.checked",
    "decision.recorded",
    "approval.requested",
    "approval.decided",
    "approval.invalidated",
    "run.interrupted",
    "run.resumed",
    "run.stopped",
  ],
  environment: [
    "sandbox.created",
    "sandbox.replaced",
    "sandbox.destroyed",
    "snapshot.saved",
    "snapshot.restored",
    "manifest.applied",
  ],
  tools: [
    "tool.called",
    "tool.completed",
    "tool.failed",
    "tool.definition_changed",
    "side_effect.intent",
    "side_effect.receipt",
    "egress.allowed",
    "egress.denied",
  ],
  vault: [
    "credential.issued",
    "credential.attached",
    "credential.used",
    "credential.revoked",
    "credential.expired",
    "credential.denied",
  ],
};

export const ACTOR_KINDS = ["user", "api_key", "system"] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export const roleEnum = pgEnum("membership_role", ROLES);
export const planeEnum = pgEnum("event_plane", PLANES);
export const sideEffectStatusEnum = pgEnum("side_effect_status", SIDE_EFFECT_STATUSES);
export const actorKindEnum = pgEnum("actor_kind", ACTOR_KINDS);
