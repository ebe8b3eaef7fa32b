/**
 * Reading and verifying a tenant's audit log (docs/concepts.md#audit-log: the chain verifies on the Audit page and
 * at `GET /api/v1/audit/verify`).
 */
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { authorize } from "../authz";
import type { VerbContext } from "../context";
import { DomainError } from "../errors";
import { AUDIT_ACTIONS, EARLIER_ACTION_NAMES, type AuditAction } from "./actions";
import { auditEntryHash, GENESIS_HASH, sealAudit } from "./append";

export type AuditEntryView = {
  seq: number;
  at: string;
  actor_kind: string;
  /** The user id or API key id the entry stored (its hash covers it). */
  actor_id: string;
  actor_label: string;
  /**
   * The action as stored: one of lib/domain/audit/actions.ts, or, for an entry written before that vocabulary's naming
   * rule, the name it was written under (docs/decisions/0023-typed-catalogues.md). Shown and filtered as text.
   */
  action: string;
  target: string;
  details: Record<string, unknown>;
  /** The hash of the entry before it in the tenant's chain (the genesis hash for the first). */
  prev_hash: string;
  hash: string;
};

type Row = {
  seq: string | number;
  at: Date | string;
  actor_kind: string;
  actor_id: string;
  actor_label: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
  prev_hash: string;
  hash: string;
};

/** The filters of the Audit page and of `GET /api/v1/audit` and its export, as given (normalized), for links. */
export type AuditFilters = {
  /** A person's user id or email, or an API key's id or `key:<name>`, as the entry stored it (any case for the label). */
  actor?: string;
  /** One of {@link AUDIT_ACTIONS}; entries stored under its earlier name (decision 0023) match too. */
  action?: AuditAction;
  /** ISO 8601 date (from 00:00 UTC) or date-time with a zone: entries at or after it. */
  from?: string;
  /** ISO 8601 date (through the end of that UTC day) or date-time with a zone: entries at or before it. */
  to?: string;
  /** A task id: the task's own entries, its side effects', credentials' and approvals' (as its evidence bundle). */
  task?: string;
  /** One target exactly as stored (the links in the Audit page's Target column). */
  target?: string;
};

/** A parsed audit query: the filters and, for a listing, the page (`before` a sequence number, `limit`). */
export type AuditQuery = { filters: AuditFilters; before?: number; limit: number };

const FILTER_NAMES = ["actor", "action", "from", "to", "task", "target"] as const;
const PAGE_NAMES = ["before", "limit"] as const;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A real calendar day (2026-02-30 is none). */
function realDay(y: string, m: string, d: string): boolean {
  const t = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return t.getUTCFullYear() === Number(y) && t.getUTCMonth() === Number(m) - 1 && t.getUTCDate() === Number(d);
}

const when = z.string().refine(
  (v) => {
    const m = DATE.exec(v) ?? DATE_TIME.exec(v);
    return !!m && realDay(m[1]!, m[2]!, m[3]!) && !Number.isNaN(new Date(v).getTime());
  },
  { message: "must be an ISO 8601 date or date-time with a zone, e.g. 2026-01-31 or 2026-01-31T09:30:00Z" },
);

const name = (max: number) => z.string().max(max, `must be at most ${max} characters`);

/**
 * The query's schema (zod): every value a string as it comes from a URL, an empty one already dropped (an empty form
 * field means "any"). `action` must be one of {@link AUDIT_ACTIONS}; an earlier name (decision 0023) is read as its
 * current one.
 */
const auditQuerySchema = z
  .object({
    actor: name(320).optional(),
    action: z
      .string()
      .transform((v) => CURRENT_NAME.get(v) ?? v)
      .pipe(z.enum(AUDIT_ACTIONS, { error: "must be one of the audit actions (lib/domain/audit/actions.ts)" }))
      .optional(),
    from: when.optional(),
    to: when.optional(),
    task: name(512).optional(),
    target: name(1024).optional(),
    before: z
      .string()
      .regex(/^[1-9]\d{0,14}$/, "must be a sequence number (a positive integer), as next_cursor gives it")
      .transform(Number)
      .optional(),
    limit: z
      .string()
      .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${MAX_LIMIT}`)
      .transform(Number)
      .pipe(z.number().min(1, `must be from 1 to ${MAX_LIMIT}`).max(MAX_LIMIT, `must be from 1 to ${MAX_LIMIT}`))
      .optional(),
  })
  .refine((q) => !q.from || !q.to || startOf(q.from) <= lastOf(q.to), {
    path: ["from"],
    message: "must not be after to",
  });

/** An earlier action name (decision 0023) → the name that replaced it. */
const CURRENT_NAME = new Map<string, AuditAction>(
  Object.entries(EARLIER_ACTION_NAMES).flatMap(([now, earlier]) =>
    (earlier ?? []).map((e): [string, AuditAction] => [e, now as AuditAction]),
  ),
);

/** The instant a `from`/`to` value starts at (a date: 00:00 UTC). */
function startOf(v: string): number {
  return new Date(DATE.test(v) ? `${v}T00:00:00Z` : v).getTime();
}

/** The last instant a `to` value covers (a date: its whole UTC day). */
function lastOf(v: string): number {
  return DATE.test(v) ? startOf(v) + 86_400_000 - 1 : startOf(v);
}

/**
 * The one parse of an audit query, for the Audit page (its search params) and for `GET /api/v1/audit` and
 * `/api/v1/audit/export` (the URL's): actor, action, from, to, task, target and — unless `paging` is false (the
 * export) — before and limit. An empty value means "any". Writes nothing and reads no database.
 * @throws DomainError bad_request (400) naming the parameter: an unknown or repeated parameter, an action outside
 *   lib/domain/audit/actions.ts, a malformed date, from after to, a bad `before` or `limit`, an over-long value.
 */
export function parseAuditQuery(
  input: URLSearchParams | Record<string, string | string[] | undefined>,
  { paging = true }: { paging?: boolean } = {},
): AuditQuery {
  const known: readonly string[] = paging ? [...FILTER_NAMES, ...PAGE_NAMES] : FILTER_NAMES;
  const raw: Record<string, string> = {};
  const entries: Array<[string, string | string[] | undefined]> =
    input instanceof URLSearchParams
      ? [...new Set(input.keys())].map((k) => [k, input.getAll(k).length > 1 ? input.getAll(k) : input.get(k)!])
      : Object.entries(input);
  for (const [key, value] of entries) {
    if (!known.includes(key)) {
      throw badParam(key, `${key} is not an audit filter; use ${known.join(", ")}.`);
    }
    if (Array.isArray(value)) throw badParam(key, `${key} is given ${value.length} times; give it once.`);
    const v = value?.trim();
    if (v) raw[key] = v;
  }
  const parsed = auditQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = String(issue.path[0] ?? "query");
    throw badParam(
      param,
      `${param} ${issue.message.replace(/^Invalid option: .*/, "must be one of the audit actions")}.`,
    );
  }
  const { before, limit, ...filters } = parsed.data;
  return { filters: filters as AuditFilters, ...(before ? { before } : {}), limit: limit ?? DEFAULT_LIMIT };
}

function badParam(param: string, message: string): DomainError {
  return new DomainError("bad_request", message, { fields: [{ path: param, message }] });
}

/** The filters as URL search parameters (the page's links, the Export link, the next page), in a stable order. */
export function auditFilterParams(filters: AuditFilters): URLSearchParams {
  const out = new URLSearchParams();
  for (const k of FILTER_NAMES) {
    const v = filters[k];
    if (v) out.set(k, v);
  }
  return out;
}

/** True when any filter is set. */
export function hasAuditFilters(filters: AuditFilters): boolean {
  return FILTER_NAMES.some((k) => !!filters[k]);
}

/**
 * The audit entries of one task: its own targets (`task:<id>`), its side effects' and credentials', and its
 * approvals'. One rule for the task filter and the task's evidence bundle (lib/export/task-bundle.ts).
 */
export function taskAuditCondition(tenantId: string, taskId: string): SQL {
  return sql`(target = ${`task:${taskId}`}
      or left(target, ${`side_effect:${taskId}/`.length}) = ${`side_effect:${taskId}/`}
      or left(target, ${`credential:${taskId}/`.length}) = ${`credential:${taskId}/`}
      or target in (select 'approval:' || a.id::text from approval_requests a where a.tenant_id = ${tenantId} and a.task_id = ${taskId}))`;
}

/** The SQL conditions of `filters` (after `tenant_id = …`). */
function filterConditions(tenantId: string, f: AuditFilters): SQL {
  const parts: SQL[] = [];
  if (f.actor) parts.push(sql`(actor_id = ${f.actor} or lower(actor_label) = lower(${f.actor}))`);
  if (f.action) {
    const names = [f.action, ...(EARLIER_ACTION_NAMES[f.action] ?? [])];
    parts.push(
      sql`action in (${sql.join(
        names.map((n) => sql`${n}`),
        sql`, `,
      )})`,
    );
  }
  if (f.from) parts.push(sql`at >= ${new Date(startOf(f.from)).toISOString()}::timestamptz`);
  if (f.to) {
    parts.push(
      DATE.test(f.to)
        ? sql`at < ${new Date(startOf(f.to) + 86_400_000).toISOString()}::timestamptz`
        : sql`date_trunc('milliseconds', at) <= ${f.to}::timestamptz`,
    );
  }
  if (f.task) parts.push(taskAuditCondition(tenantId, f.task));
  if (f.target) parts.push(sql`target = ${f.target}`);
  return parts.length ? sql`and ${sql.join(parts, sql` and `)}` : sql``;
}

function view(r: Row): AuditEntryView {
  return {
    seq: Number(r.seq),
    at: new Date(r.at).toISOString(),
    actor_kind: r.actor_kind,
    actor_id: r.actor_id,
    actor_label: r.actor_label,
    action: r.action,
    target: r.target,
    details: r.details,
    prev_hash: r.prev_hash,
    hash: r.hash,
  };
}

async function filteredPage(
  { db, actor }: VerbContext,
  filters: AuditFilters,
  beforeSeq: number | undefined,
  limit: number,
): Promise<Row[]> {
  return queryRows<Row>(
    db,
    sql`select seq, at, actor_kind, actor_id, actor_label, action, target, details, prev_hash, hash from audit_log
        where tenant_id = ${actor.tenantId}
          ${beforeSeq ? sql`and seq < ${beforeSeq}` : sql``}
          ${filterConditions(actor.tenantId, filters)}
        order by seq desc limit ${limit}`,
  );
}

/**
 * Newest entries first that match `query.filters` ({@link parseAuditQuery}), `limit` per page, before sequence
 * `before` when given. Who may: `audit.read` (lib/domain/authz.ts) — the page, the API and the export alike.
 * @returns the page and `next_before`, the sequence number to pass as `before` for the next page (null at the end).
 * @throws DomainError forbidden
 */
export async function listAudit(
  ctx: VerbContext,
  query: Partial<AuditQuery> = {},
): Promise<{ entries: AuditEntryView[]; next_before: number | null }> {
  authorize(ctx.actor, "audit.read");
  // Entries a crash left pending join the chain before it is read (docs/decisions/0020-audit-sealing.md).
  await sealAudit(ctx.db, ctx.actor.tenantId);
  const limit = Math.min(Math.max(query.limit ?? DEFAULT_LIMIT, 1), MAX_LIMIT);
  const rows = await filteredPage(ctx, query.filters ?? {}, query.before, limit + 1);
  const page = rows.slice(0, limit);
  return {
    entries: page.map(view),
    next_before: rows.length > limit ? Number(page[page.length - 1]!.seq) : null,
  };
}

/** One line of an audit export: the entry with what its hash covers (tenant and actor id), so it checks offline. */
export type AuditExportLine = AuditEntryView & { tenant_id: string };

const EXPORT_PAGE = 500;

/**
 * Every entry that matches `filters`, newest first (the listing's order), read `EXPORT_PAGE` at a time by sequence
 * number so a large log never sits in memory. Authorizes (`audit.read`) and reads the first page before it returns,
 * so a refusal comes before the first byte; entries written after the export began are not in it.
 * Each line's `hash` recomputes from its `prev_hash` and content (lib/domain/audit/append.ts `auditEntryHash`), and
 * of two lines with consecutive sequence numbers the newer one's `prev_hash` is the older one's `hash`.
 * @throws DomainError forbidden
 */
export async function exportAudit(
  ctx: VerbContext,
  filters: AuditFilters,
): Promise<{ filename: string; lines: AsyncGenerator<AuditExportLine> }> {
  authorize(ctx.actor, "audit.read");
  await sealAudit(ctx.db, ctx.actor.tenantId);
  const tenantId = ctx.actor.tenantId;
  const first = await filteredPage(ctx, filters, undefined, EXPORT_PAGE);
  async function* lines(): AsyncGenerator<AuditExportLine> {
    let rows = first;
    while (rows.length) {
      for (const r of rows) yield { tenant_id: tenantId, ...view(r) };
      if (rows.length < EXPORT_PAGE) return;
      rows = await filteredPage(ctx, filters, Number(rows[rows.length - 1]!.seq), EXPORT_PAGE);
    }
  }
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return { filename: `audit-${stamp}.jsonl`, lines: lines() };
}

export type ChainCheck = {
  ok: boolean;
  checked: number;
  broken_at: number | null;
  message: string;
  /** The first entry that does not verify (as stored), when the chain is broken. */
  first_bad_entry?: AuditEntryView & { expected_prev_hash: string };
  /**
   * When the chain's last entry is not the head the server recorded (`audit_heads`, decision 0020): entries after
   * `last_seq` up to `recorded_seq` were deleted, or the last one replaced (decision 0035).
   */
  truncated?: { recorded_seq: number; recorded_hash: string; last_seq: number; last_hash: string };
};

/**
 * Recomputes every entry's hash from its content and its predecessor's hash, then compares the chain's end with the
 * head the server recorded when it wrote the last entry (decision 0035): deleting the newest entries is reported at
 * once, not when the next entry is written.
 * @returns ok with the count checked, or the first sequence number whose hash or link does not match (for a cut-off
 *   chain: the first missing one, with `truncated`).
 */
export async function verifyAuditChain({ db, actor }: VerbContext): Promise<ChainCheck> {
  authorize(actor, "audit.read");
  await sealAudit(db, actor.tenantId);
  // The head first: entries written while the chain is read (after the head) are left for the next check.
  const [head] = await queryRows<{ seq: string | number; hash: string }>(
    db,
    sql`select seq, hash from audit_heads where tenant_id = ${actor.tenantId}`,
  );
  const upTo = head ? sql`and seq <= ${Number(head.seq)}` : sql``;
  let prev = GENESIS_HASH;
  let checked = 0;
  let after = 0;
  for (;;) {
    const rows = await queryRows<Row>(
      db,
      sql`select seq, at, actor_kind, actor_id, actor_label, action, target, details, prev_hash, hash from audit_log
          where tenant_id = ${actor.tenantId} and seq > ${after} ${upTo} order by seq limit 1000`,
    );
    if (!rows.length) break;
    for (const r of rows) {
      const seq = Number(r.seq);
      const expected = auditEntryHash(prev, {
        tenantId: actor.tenantId,
        seq,
        at: new Date(r.at).toISOString(),
        actorKind: r.actor_kind,
        actorId: r.actor_id,
        actorLabel: r.actor_label,
        action: r.action,
        target: r.target,
        details: r.details,
      });
      if (r.prev_hash !== prev || r.hash !== expected || seq !== checked + 1) {
        return {
          ok: false,
          checked,
          broken_at: seq,
          message: `Entry #${seq} does not match the chain: the log was altered at or before it.`,
          first_bad_entry: {
            ...view(r),
            expected_prev_hash: prev,
          },
        };
      }
      prev = r.hash;
      checked++;
      after = seq;
    }
  }
  const recordedSeq = head ? Number(head.seq) : 0;
  const recordedHash = head ? head.hash : GENESIS_HASH;
  if (recordedSeq !== checked || recordedHash !== prev) {
    const missing = recordedSeq > checked ? recordedSeq - checked : 0;
    return {
      ok: false,
      checked,
      broken_at: checked + 1,
      message: missing
        ? `The chain ends at entry #${checked}, but the server recorded entry #${recordedSeq} as its last: ${missing} ${missing === 1 ? "entry was" : "entries were"} deleted from the end of the log.`
        : `The chain's last entry (#${checked}) is not the one the server recorded as its last (#${recordedSeq}): the end of the log was altered.`,
      truncated: { recorded_seq: recordedSeq, recorded_hash: recordedHash, last_seq: checked, last_hash: prev },
    };
  }
  return {
    ok: true,
    checked,
    broken_at: null,
    message: checked ? `All ${checked} entries verify.` : "The log is empty.",
  };
}
