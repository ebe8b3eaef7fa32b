/**
 * Policy versions (docs/concepts.md#policy-versions-and-lint): a tenant's immutable, numbered policy documents, their
 * lint findings, and which one is active. Rows are never updated except `activated_at` (set once, when a version
 * is first made current); the current version is the one with the latest activation.
 */
import { sql } from "drizzle-orm";
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { tenants } from "./tenancy";

/** A duration in a policy: seconds as a number, or text such as `15m`, `24h`, `7d`. */
type PolicyDuration = number | string;

/**
 * A policy document as stored: what the schema in lib/domain/policies/document.ts produces (defaults filled in). That
 * module fails to compile when its schema's output and this type differ.
 */
export type StoredPolicyDocument = {
  network: { access: "none" | "restricted" | "open"; allowed_domains: string[] };
  credentials: {
    name: string;
    type: "environment_variable" | "function_tool";
    allowed_hosts: string[];
    scope?: string;
    ttl?: PolicyDuration;
    protocol: string;
    port: number;
    revocation_url?: string;
  }[];
  tools: {
    name: string;
    mutation: boolean;
    requires_approval: boolean;
    approval_ttl?: PolicyDuration;
    hosts: string[];
    lookup_url?: string;
  }[];
  spending_limits?: {
    action: string;
    amount: number;
    currency: string;
    period: PolicyDuration;
    per: "principal";
  }[];
};

/** One lint finding of a policy version; `path` is like `credentials[0].allowed_hosts[0]` (empty for the whole document). */
export type PolicyFinding = {
  severity: "error" | "warning";
  rule: string;
  path: string;
  message: string;
};

export const policyVersions = pgTable(
  "policy_versions",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    /** 1, 2, 3 … per tenant, in the order they were stored. */
    version: integer("version").notNull(),
    /** The document as read (JSON or YAML), normalized by its schema (defaults filled in). */
    document: jsonb("document").$type<StoredPolicyDocument | null>(),
    /** The text as sent, so people see the YAML they wrote (credential values are refused before storing). */
    sourceText: text("source_text").notNull(),
    sourceFormat: text("source_format").$type<"json" | "yaml">().notNull(),
    /** sha256 of the RFC 8785 canonical JSON of the document (of the source text when its shape is wrong). */
    digest: text("digest").notNull(),
    findings: jsonb("findings").$type<PolicyFinding[]>().notNull(),
    /** False when a finding is an error: such a version is kept but can never be activated. */
    valid: boolean("valid").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** When an owner or admin last made this version current (null: never active). */
    activatedAt: timestamp("activated_at", { withTimezone: true }),
    activatedBy: text("activated_by"),
  },
  (t) => [
    primaryKey({ name: "policy_versions_pkey", columns: [t.tenantId, t.version] }),
    uniqueIndex("policy_versions_tenant_digest_idx").on(t.tenantId, t.digest),
    index("policy_versions_tenant_activated_idx").on(t.tenantId, sql`${t.activatedAt} desc nulls last`),
  ],
);
