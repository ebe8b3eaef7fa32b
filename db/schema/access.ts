/**
 * Who may get in, and for how long: sessions of signed-in people, invitations to a workspace, and the sign-in
 * throttle. `sessions` and `invitations` are found by a hash before the tenant is known (like `api_keys`, see
 * docs/decisions/0002-api-keys.md); every other query on them filters by tenant or user first.
 */
import { index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { roleEnum } from "./enums";
import { tenants, users } from "./tenancy";

/**
 * One row per sign-in. The session cookie (an encrypted next-auth JWT) carries a random id; only its sha256 is
 * stored. A request is signed in only while its row is neither ended nor expired and the person still holds an
 * active membership in the row's workspace — so sign-out, removal and expiry take effect on the next request.
 */
export const sessions = pgTable(
  "sessions",
  {
    /** sha256 hex of the random session id in the cookie. */
    idHash: text("id_hash").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    /** The workspace every page and API call of this session works in (switchable). */
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** When the workspace was last chosen (sign-in or switch); the newest one is preselected at the next sign-in. */
    selectedAt: timestamp("selected_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    endedAt: timestamp("ended_at", { withTimezone: true }),
    /** `signed_out`, `member_removed`, `password_changed`. */
    endedReason: text("ended_reason"),
  },
  (t) => [
    index("sessions_user_idx").on(t.userId, t.selectedAt),
    index("sessions_tenant_user_idx").on(t.tenantId, t.userId),
  ],
);

/**
 * A one-time link that lets a person set their password and join a workspace with a role. Only the token's
 * sha256 is stored; a link is single use (`accepted_at`), expires, and is withdrawn when a newer one is made
 * for the same email or the member is removed.
 */
export const invitations = pgTable(
  "invitations",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    id: uuid("id").notNull().defaultRandom(),
    /** Lower-cased. */
    email: text("email").notNull(),
    role: roleEnum("role").notNull(),
    tokenHash: text("token_hash").notNull(),
    /** Label of who made it (an email, or `setup`). */
    invitedBy: text("invited_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    acceptedAt: timestamp("accepted_at", { withTimezone: true }),
    acceptedUserId: uuid("accepted_user_id"),
    withdrawnAt: timestamp("withdrawn_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ name: "invitations_pkey", columns: [t.tenantId, t.id] }),
    uniqueIndex("invitations_token_key").on(t.tokenHash),
    index("invitations_tenant_email_idx").on(t.tenantId, t.email),
  ],
);

/**
 * Failed sign-ins per email and source (client address), and per email across all sources (`source = '*'`):
 * how many in the current window and when the next try may be checked. Each try claims a check with one
 * guarded upsert before the password is verified (lib/domain/tenancy/sign-in-throttle.ts).
 */
export const signInThrottle = pgTable(
  "sign_in_throttle",
  {
    /** Lower-cased email as typed (it may name no user). */
    email: text("email").notNull(),
    /** Client address, or `*` for the email's row across all sources. */
    source: text("source").notNull(),
    failures: integer("failures").notNull(),
    windowStartedAt: timestamp("window_started_at", { withTimezone: true }).notNull().defaultNow(),
    lastFailureAt: timestamp("last_failure_at", { withTimezone: true }).notNull().defaultNow(),
    /** No password is checked for this key before this time. */
    nextAllowedAt: timestamp("next_allowed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "sign_in_throttle_pkey", columns: [t.email, t.source] }),
    index("sign_in_throttle_last_idx").on(t.lastFailureAt),
  ],
);
