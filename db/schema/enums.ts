/**
 * Closed vocabularies shared by the database, zod schemas and the UI: the ones PostgreSQL enums are made of.
 * Source: docs/concepts.md. Event types are text columns; their catalogue is lib/domain/events/catalogue.ts.
 */
import { pgEnum } from "drizzle-orm/pg-core";

export const ROLES = ["owner", "approver", "responder", "viewer", "admin"] as const;
export type Role = (typeof ROLES)[number];

export const PLANES = ["session", "environment", "tools", "vault"] as const;
export type Plane = (typeof PLANES)[number];

/** Side-effect lifecycle (docs/concepts.md#side-effect-lifecycle). */
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

export const ACTOR_KINDS = ["user", "api_key", "system"] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export const roleEnum = pgEnum("membership_role", ROLES);
export const planeEnum = pgEnum("event_plane", PLANES);
export const sideEffectStatusEnum = pgEnum("side_effect_status", SIDE_EFFECT_STATUSES);
export const actorKindEnum = pgEnum("actor_kind", ACTOR_KINDS);
