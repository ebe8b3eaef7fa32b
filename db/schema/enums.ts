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

/**
 * What a runtime API key may do (docs/decisions/0044-api-key-scopes.md): `full` — every route a runtime key may use;
 * `runtime` — the runtime protocol only (events, task records, intents, receipts, the gate, imports, traces);
 * `read_only` — GET only; `task_prefix` — every runtime route, on tasks whose id starts with the key's prefix.
 */
export const API_KEY_SCOPES = ["full", "runtime", "read_only", "task_prefix"] as const;
export type ApiKeyScopeKind = (typeof API_KEY_SCOPES)[number];

export const ACTOR_KINDS = ["user", "api_key", "system"] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export const roleEnum = pgEnum("membership_role", ROLES);
export const planeEnum = pgEnum("event_plane", PLANES);
export const sideEffectStatusEnum = pgEnum("side_effect_status", SIDE_EFFECT_STATUSES);
export const apiKeyScopeEnum = pgEnum("api_key_scope", API_KEY_SCOPES);
export const actorKindEnum = pgEnum("actor_kind", ACTOR_KINDS);
