/**
 * Revocation, proven (docs/concepts.md#egress-and-vault-custody): for each credential reference a task's runs held, the
 * last issue, use and revocation events, and "Test revocation": ask the tool owner's revocation endpoint (the
 * credential's `revocation_url` in the current policy; the same outbound rules as lookups: no link-local or metadata
 * targets, the connection goes to the address that was checked) whether the credential is revoked, and keep the answer
 * as evidence on the vault lane (`credential.revocation_checked`) beside an audit entry.
 *
 * Expected answer: HTTP 200 with JSON `{"revoked": true|false, "revoked_at"?: "<RFC 3339>"}`. Anything else is
 * recorded as `ambiguous` (or `unreachable` / `refused` / `timeout`); only `revoked` and `revoked_at` are kept.
 */
import { sql } from "drizzle-orm";
import { insertServerEvent } from "../events/server-events";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { RevocationCheckFact } from "@/lib/contract/maps";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { DomainError, notFound } from "../errors";
import { OCCURRED_AT_PATTERN, plausibleTime } from "../events/schema";
import { outboundGet, type Resolver } from "../web/outbound";
import { currentPolicyRow } from "./current";
import { parseJsonWithin } from "../json/text";
import type { VerbContext } from "../context";

/** One `credential.used` event: which tool used the credential, toward which host, when (metadata only). */
export type CredentialUse = {
  event_id: string;
  occurred_at: string;
  tool: string | null;
  host: string | null;
  purpose: string | null;
  attempt: number | null;
};

/** Uses listed per credential (newest first); `used` says how many there are in all. */
export const CREDENTIAL_USES_LISTED = 20;

/** What the run did with one credential reference, from its vault-lane events, and the last revocation check. */
export type CredentialCustody = {
  credential_ref: string;
  last_issued_at: string | null;
  last_used_at: string | null;
  /** How many `credential.used` events the task has for it: the length of `uses` unless more than are listed. */
  used: number;
  /** The newest {@link CREDENTIAL_USES_LISTED} uses, newest first: the rows the count of uses counts. */
  uses: CredentialUse[];
  last_revoked_at: string | null;
  last_expired_at: string | null;
  scope: string | null;
  expires_at: string | null;
  /** The current policy names a revocation endpoint for it. */
  can_check: boolean;
  last_check: {
    outcome: RevocationOutcome;
    revoked: boolean | null;
    checked_at: string;
    checked_by: string | null;
  } | null;
};

export type RevocationOutcome = "revoked" | "not_revoked" | "ambiguous" | "timeout" | "unreachable" | "refused";

type Row = {
  ref: string;
  type: string;
  n: string | number;
  last_at: string;
  scope: string | null;
  expires_at: string | null;
  last_attrs: Record<string, unknown> | null;
  last_actor: string | null;
};

/** The credentials a task's runs held, newest activity first (no authorization: callers check it). */
export async function credentialFacts(db: Db, tenantId: string, taskId: string): Promise<CredentialCustody[]> {
  const [rows, current, useRows] = await Promise.all([
    queryRows<Row>(
      db,
      sql`select distinct on (ref, type) ref, type, n, last_at, scope, expires_at, last_attrs, last_actor from (
            select attrs ->> 'credential_ref' as ref, type,
                   count(*) over (partition by attrs ->> 'credential_ref', type) as n,
                   ${isoUtc("occurred_at")} as last_at, occurred_at, seq,
                   attrs ->> 'scope' as scope, attrs ->> 'expires_at' as expires_at,
                   case when type = 'credential.revocation_checked' then attrs end as last_attrs, actor as last_actor
            from events
            where tenant_id = ${tenantId} and task_id = ${taskId} and plane = 'vault' and (attrs ->> 'credential_ref') is not null
          ) e
          order by ref, type, occurred_at desc, seq desc
          limit 2000`,
    ),
    currentPolicyRow(db, tenantId),
    queryRows<CredentialUse & { ref: string }>(
      db,
      sql`select ref, event_id, occurred_at, tool, host, purpose, attempt from (
            select attrs ->> 'credential_ref' as ref, event_id, ${isoUtc("occurred_at")} as occurred_at,
                   attrs ->> 'tool' as tool, lower(attrs ->> 'host') as host, attrs ->> 'purpose' as purpose, attempt,
                   row_number() over (partition by attrs ->> 'credential_ref' order by occurred_at desc, seq desc) as n
            from events
            where tenant_id = ${tenantId} and task_id = ${taskId} and plane = 'vault' and type = 'credential.used'
              and (attrs ->> 'credential_ref') is not null
          ) u
          where n <= ${CREDENTIAL_USES_LISTED}
          order by ref, n
          limit 2000`,
    ),
  ]);
  const usesByRef = new Map<string, CredentialUse[]>();
  for (const { ref, ...u } of useRows) {
    const list = usesByRef.get(ref) ?? [];
    list.push({ ...u, attempt: u.attempt === null ? null : Number(u.attempt) });
    usesByRef.set(ref, list);
  }
  const checkable = new Set((current?.document?.credentials ?? []).filter((c) => c.revocation_url).map((c) => c.name));
  const byRef = new Map<string, CredentialCustody>();
  for (const r of rows) {
    const c =
      byRef.get(r.ref) ??
      ({
        credential_ref: r.ref,
        last_issued_at: null,
        last_used_at: null,
        used: 0,
        uses: usesByRef.get(r.ref) ?? [],
        last_revoked_at: null,
        last_expired_at: null,
        scope: null,
        expires_at: null,
        can_check: checkable.has(r.ref),
        last_check: null,
      } as CredentialCustody);
    if (r.type === "credential.issued") {
      c.last_issued_at = r.last_at;
      c.scope = r.scope;
      c.expires_at = r.expires_at;
    } else if (r.type === "credential.used") {
      c.last_used_at = r.last_at;
      c.used = Number(r.n);
    } else if (r.type === "credential.revoked") c.last_revoked_at = r.last_at;
    else if (r.type === "credential.expired") c.last_expired_at = r.last_at;
    else if (r.type === "credential.revocation_checked" && r.last_attrs) {
      const a = r.last_attrs;
      c.last_check = {
        outcome: String(a.outcome) as RevocationOutcome,
        revoked: typeof a.revoked === "boolean" ? a.revoked : null,
        checked_at: r.last_at,
        checked_by: r.last_actor,
      };
    }
    byRef.set(r.ref, c);
  }
  const latest = (c: CredentialCustody) =>
    [c.last_issued_at, c.last_used_at, c.last_revoked_at, c.last_expired_at, c.last_check?.checked_at]
      .filter(Boolean)
      .sort()
      .pop() ?? "";
  return [...byRef.values()].sort((a, b) => latest(b).localeCompare(latest(a)));
}

const REVOCATION_OUTCOMES: readonly RevocationOutcome[] = [
  "revoked",
  "not_revoked",
  "ambiguous",
  "timeout",
  "unreachable",
  "refused",
];

/**
 * A task's "Test revocation" checks, newest first (at most `limit`): each `credential.revocation_checked` event with
 * its answer, for an interruption exercise's "Test revocation" step to link as evidence. No authorization: callers
 * check it. Only the server writes these events ({@link checkRevocation}): the events route refuses the type from a
 * runtime, whose own types carry the `x.` prefix. With `eventId`, only that event (if it is such a check).
 */
export async function revocationChecks(
  db: Db,
  tenantId: string,
  taskId: string,
  limit = 20,
  eventId?: string,
): Promise<RevocationCheckFact[]> {
  const rows = await queryRows<{ event_id: string; at: string; actor: string | null; attrs: Record<string, unknown> }>(
    db,
    sql`select event_id, ${isoUtc("occurred_at")} as at, actor, attrs from events
        where tenant_id = ${tenantId} and task_id = ${taskId} and plane = 'vault' and type = 'credential.revocation_checked'
          and (attrs ->> 'credential_ref') is not null${eventId === undefined ? sql`` : sql` and event_id = ${eventId}`}
        order by occurred_at desc, seq desc
        limit ${limit}`,
  );
  return rows.map((r) => {
    const a = r.attrs;
    const outcome = REVOCATION_OUTCOMES.includes(a.outcome as RevocationOutcome)
      ? (a.outcome as RevocationOutcome)
      : "ambiguous";
    return {
      event_id: r.event_id,
      credential_ref: String(a.credential_ref),
      outcome,
      revoked_at: typeof a.revoked_at === "string" ? a.revoked_at : null,
      checked_at: r.at,
      checked_by: r.actor,
      endpoint_host: typeof a.endpoint_host === "string" ? a.endpoint_host : null,
      policy_version: typeof a.policy_version === "number" ? a.policy_version : null,
    };
  });
}

/**
 * A vault-lane event that carried a credential value or placeholder (redacted before storage;
 * docs/concepts.md#redaction).
 */
export type FlaggedVaultEvent = {
  event_id: string;
  type: string;
  credential_ref: string | null;
  occurred_at: string;
  kinds: string[];
};

/** The newest 50 flagged vault-lane events of a task (no authorization: callers check it). */
export async function flaggedVaultEvents(db: Db, tenantId: string, taskId: string): Promise<FlaggedVaultEvent[]> {
  const rows = await queryRows<{
    event_id: string;
    type: string;
    credential_ref: string | null;
    occurred_at: string;
    kinds: string[] | null;
  }>(
    db,
    sql`select event_id, type, attrs ->> 'credential_ref' as credential_ref, ${isoUtc("occurred_at")} as occurred_at, redaction_kinds as kinds
        from events
        where tenant_id = ${tenantId} and task_id = ${taskId} and plane = 'vault' and redaction_count > 0
        order by events.occurred_at desc, event_id desc
        limit 50`,
  );
  return rows.map((r) => ({ ...r, kinds: r.kinds ?? [] }));
}

/**
 * `GET /api/v1/tasks/{taskId}/credentials`: the credentials the task's runs held, and the vault-lane events that
 * carried a credential value or placeholder (`flagged_events`, newest 50; redacted before storage).
 * @throws DomainError forbidden, not_found.
 */
export async function taskCredentials(
  { db, actor }: VerbContext,
  { taskId }: { taskId: string },
): Promise<{ credentials: CredentialCustody[]; flagged_events: FlaggedVaultEvent[] }> {
  authorize(actor, "tasks.read");
  await requireTask(db, actor.tenantId, taskId);
  const [credentials, flagged_events] = await Promise.all([
    credentialFacts(db, actor.tenantId, taskId),
    flaggedVaultEvents(db, actor.tenantId, taskId),
  ]);
  return { credentials, flagged_events };
}

async function requireTask(db: Db, tenantId: string, taskId: string): Promise<void> {
  const rows = await queryRows<{ one: number }>(
    db,
    sql`select 1 as one from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  if (!rows.length) throw notFound(`Task ${taskId}`);
}

/** The kept part of a revocation endpoint's answer: `{revoked, revoked_at?}`, or null when it says neither. */
export function keptRevocationAnswer(text: string | null): { revoked: boolean; revoked_at: string | null } | null {
  if (!text) return null;
  // Not JSON, or nested past anything the answer needs (not parsed at all): says neither.
  const read = parseJsonWithin(text, 32);
  if (!read) return null;
  const body = read.value;
  if (!body || typeof body !== "object" || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  if (typeof b.revoked !== "boolean") return null;
  const at =
    typeof b.revoked_at === "string" && OCCURRED_AT_PATTERN.test(b.revoked_at) && plausibleTime(b.revoked_at)
      ? b.revoked_at
      : null;
  return { revoked: b.revoked, revoked_at: at };
}

/**
 * `POST /api/v1/tasks/{taskId}/credentials/{ref}/revocation-check`: asks the credential's revocation endpoint and
 * records the answer as evidence (a `credential.revocation_checked` vault event and an audit entry, one transaction).
 * Responders, owners and admins.
 * @returns `{credential_ref, outcome, revoked, revoked_at, http_status, checked_at, event_id, policy_version, message}`.
 * @throws DomainError forbidden, not_found (task; or a credential the task never held), validation_failed (422: the
 *   current policy names no revocation endpoint for it).
 */
export async function checkRevocation(
  { db, actor }: VerbContext,
  { taskId, ref, ...opts }: { taskId: string; ref: string; resolve?: Resolver; timeoutMs?: number },
): Promise<{
  credential_ref: string;
  outcome: RevocationOutcome;
  revoked: boolean | null;
  revoked_at: string | null;
  http_status: number | null;
  checked_at: string;
  event_id: string;
  policy_version: number;
  message: string;
}> {
  authorize(actor, "credentials.check");
  await requireTask(db, actor.tenantId, taskId);
  const held = await queryRows<{ credential_id: string | null }>(
    db,
    sql`select attrs ->> 'credential_id' as credential_id from events
        where tenant_id = ${actor.tenantId} and task_id = ${taskId} and plane = 'vault' and attrs ->> 'credential_ref' = ${ref}
        order by occurred_at desc, seq desc limit 1`,
  );
  if (!held.length) throw notFound(`Credential ${ref} in task ${taskId}`);
  const current = await currentPolicyRow(db, actor.tenantId);
  const declared = current?.document?.credentials.find((c) => c.name === ref);
  if (!current || !declared?.revocation_url) {
    throw new DomainError(
      "validation_failed",
      current
        ? `The current policy v${current.version} names no revocation_url for the credential ${ref}; add one to its entry in a new policy version to test revocation here.`
        : "No policy is active: activate one whose credential entry names a revocation_url to test revocation here.",
    );
  }
  const url = new URL(declared.revocation_url);
  url.searchParams.set("credential_ref", ref);
  if (held[0]!.credential_id) url.searchParams.set("credential_id", held[0]!.credential_id);
  const res = await outboundGet(url, {
    timeoutMs: opts.timeoutMs ?? 5000,
    maxBytes: 16 * 1024,
    resolve: opts.resolve,
    headers: { accept: "application/json" },
  });
  let outcome: RevocationOutcome;
  let kept: { revoked: boolean; revoked_at: string | null } | null = null;
  let status: number | null = null;
  if (res.kind === "answer") {
    status = res.status;
    kept = res.status === 200 ? keptRevocationAnswer(res.text) : null;
    outcome = kept ? (kept.revoked ? "revoked" : "not_revoked") : "ambiguous";
  } else outcome = res.kind === "timeout" ? "timeout" : res.kind === "refused" ? "refused" : "unreachable";
  const message = {
    revoked: `${url.host} says ${ref} is revoked${kept?.revoked_at ? ` since ${kept.revoked_at}` : ""}.`,
    not_revoked: `${url.host} says ${ref} is NOT revoked: it still works. Revoke it with its owner before resuming.`,
    ambiguous: `${url.host} answered${status ? ` HTTP ${status}` : ""} without a clear {"revoked": true|false}; nothing is proven.`,
    timeout: `${url.host} did not answer in time; nothing is proven.`,
    unreachable: `${url.host} could not be reached; nothing is proven.`,
    refused: `${url.host} may not be called (link-local or metadata address); nothing is proven.`,
  }[outcome];
  const by = actorRef(actor).label;
  return db.transaction(async (tx) => {
    const audit = await appendAudit(tx, actor, {
      action: "credential.revocation_checked",
      target: `credential:${taskId}/${ref}`,
      details: {
        outcome,
        revoked: kept?.revoked ?? null,
        http_status: status,
        endpoint_host: url.host,
        policy_version: current.version,
      },
    });
    const eventId = `custody:revocation-check:${taskId}:${ref}:${audit.seq}`;
    const checkedAt = await insertServerEvent(tx, {
      tenantId: actor.tenantId,
      eventId,
      taskId,
      plane: "vault",
      type: "credential.revocation_checked",
      occurredAt: sql`clock_timestamp()`,
      actor: by,
      attrs: {
        credential_ref: ref,
        credential_id: held[0]!.credential_id,
        outcome,
        revoked: kept?.revoked ?? null,
        revoked_at: kept?.revoked_at ?? null,
        http_status: status,
        endpoint_host: url.host,
        policy_version: current.version,
        audit_seq: audit.seq,
      },
    });
    return {
      credential_ref: ref,
      outcome,
      revoked: kept?.revoked ?? null,
      revoked_at: kept?.revoked_at ?? null,
      http_status: status,
      checked_at: checkedAt!,
      event_id: eventId,
      policy_version: current.version,
      message,
    };
  });
}
