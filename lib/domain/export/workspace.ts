/**
 * The content of a workspace bundle (`GET /api/v1/export?from=&to=`, docs/decisions/0038-workspace-export.md): every
 * task created in the range (each as its task bundle, under `tasks/task-<id>/`), the custody maps with every published
 * version and exercise, the policy versions, the approval settings, the members (no password hashes) and runtime API
 * keys (no key hashes), and the workspace's audit chain whole. Produced file by file from keyset-paged reads, so what
 * is held in memory is one page of rows and the writer's current part, whatever the workspace's size.
 */
import { sql, type SQL } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { sealAudit } from "../audit/append";
import { DomainError } from "../errors";

/**
 * Where a bundle's files go: the bundle writer (lib/export/bundle-writer.ts) or a view of it under a directory. Names
 * are `/`-separated segments of `[A-Za-z0-9._-]`; a JSON Lines stream is cut into parts by the writer.
 */
export type BundleSink = {
  addFile(name: string, content: string | Uint8Array): Promise<void>;
  addJson(name: string, value: unknown): Promise<void>;
  jsonl(stream: string): { write(record: unknown): Promise<void>; end(): Promise<void> };
};

/** Rows per read of a keyset-paged list. */
export const PAGE_ROWS = 500;

/** The longest range one export may cover (decision 0038): a year and a day. */
export const MAX_EXPORT_RANGE_DAYS = 366;

/** A checked range of task creation times: `from` inclusive, `to` exclusive, both ISO 8601 UTC. */
export type ExportRange = { from: string; to: string };

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * Reads `from` and `to` (ISO 8601 dates or times with a zone; `to` defaults to now, `from` to `to` minus
 * {@link MAX_EXPORT_RANGE_DAYS} days).
 * @throws DomainError bad_request (not a date, or `from` after `to`), export_range_too_large (422: over
 *   {@link MAX_EXPORT_RANGE_DAYS} days; `details: {limit_days, value_days}`).
 */
export function parseExportRange(from: string | null, to: string | null, now = new Date()): ExportRange {
  const parse = (name: string, v: string): Date => {
    const d = ISO_WITH_ZONE.test(v) ? new Date(v) : new Date(Number.NaN);
    if (Number.isNaN(d.getTime())) {
      throw new DomainError(
        "bad_request",
        `${name} must be an ISO 8601 date or time with a zone, e.g. 2026-01-01 or 2026-01-01T00:00:00Z`,
      );
    }
    return d;
  };
  const end = to ? parse("to", to) : now;
  const start = from ? parse("from", from) : new Date(end.getTime() - MAX_EXPORT_RANGE_DAYS * 86_400_000);
  if (start.getTime() > end.getTime()) throw new DomainError("bad_request", "from must not be after to");
  const days = (end.getTime() - start.getTime()) / 86_400_000;
  if (days > MAX_EXPORT_RANGE_DAYS) {
    throw new DomainError(
      "export_range_too_large",
      `An export covers at most ${MAX_EXPORT_RANGE_DAYS} days of tasks; this range is ${Math.ceil(days)} days. Export it in parts.`,
      { limit_days: MAX_EXPORT_RANGE_DAYS, value_days: Math.ceil(days) },
    );
  }
  return { from: start.toISOString(), to: end.toISOString() };
}

/**
 * The directory of the `n`-th task (1-based) inside a workspace bundle: `tasks/000001`, … (decision 0037: a task id may
 * hold `:` and run past what a name allows); `bundle.json`'s `tasks` maps each number to its task id.
 */
export function taskDir(n: number): string {
  return `tasks/${String(n).padStart(6, "0")}`;
}

/** A view of `sink` whose names all start with `dir/`. */
export function under(sink: BundleSink, dir: string): BundleSink {
  return {
    addFile: (name, content) => sink.addFile(`${dir}/${name}`, content),
    addJson: (name, value) => sink.addJson(`${dir}/${name}`, value),
    jsonl: (stream) => sink.jsonl(`${dir}/${stream}`),
  };
}

/** Rows of one keyset-paged query, one at a time; `query(after, limit)` returns `k` (the key, text) and `row`. */
async function* rowsOf(
  db: Db,
  query: (after: string | null, limit: number) => SQL,
): AsyncGenerator<Record<string, unknown>> {
  let after: string | null = null;
  for (;;) {
    const rows: Array<{ k: string; row: Record<string, unknown> }> = await queryRows(db, query(after, PAGE_ROWS));
    for (const r of rows) yield r.row;
    if (rows.length < PAGE_ROWS) return;
    after = rows[rows.length - 1]!.k;
  }
}

/** Writes every row of `rows` as one JSON Lines stream. */
async function stream(sink: BundleSink, name: string, rows: AsyncIterable<Record<string, unknown>>): Promise<number> {
  const out = sink.jsonl(name);
  let n = 0;
  for await (const r of rows) {
    await out.write(r);
    n += 1;
  }
  await out.end();
  return n;
}

/** The tasks created in the range, in (created_at, task_id) order, page by page: ids only. */
export async function* tasksInRange(db: Db, tenantId: string, range: ExportRange): AsyncGenerator<string[]> {
  let after: { at: string; id: string } | null = null;
  for (;;) {
    const rows: Array<{ task_id: string; at: string }> = await queryRows(
      db,
      sql`select task_id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
          from tasks
          where tenant_id = ${tenantId} and created_at >= ${range.from}::timestamptz and created_at < ${range.to}::timestamptz
            and deleted_at is null -- a deleted task (decision 0054) has nothing left to export but its audit entry
            ${after ? sql`and (created_at, task_id) > (${after.at}::timestamptz, ${after.id})` : sql``}
          order by created_at, task_id limit ${PAGE_ROWS}`,
    );
    if (rows.length === 0) return;
    yield rows.map((r) => r.task_id);
    if (rows.length < PAGE_ROWS) return;
    const last = rows[rows.length - 1]!;
    after = { at: last.at, id: last.task_id };
  }
}

/**
 * Writes every file of the workspace bundle but the writer's own (keys, manifest, attestation), in a fixed order.
 * @param writeTask writes one task's bundle files into the sink it is given (the task export's own producer), here a
 *   view under {@link taskDir}.
 * @returns the facts `bundle.json` carries besides the writer's: the workspace, the range, `tasks` (`[{dir, task_id}]`,
 *   what the verifier checks each task directory against) and the counts.
 */
export async function writeWorkspaceFiles(
  sink: BundleSink,
  db: Db,
  tenantId: string,
  range: ExportRange,
  writeTask: (sink: BundleSink, taskId: string) => Promise<void>,
): Promise<Record<string, unknown>> {
  const [ws] = await queryRows<{ id: string; slug: string; name: string; imported_from: unknown }>(
    db,
    sql`select id, slug, name, imported_from from tenants where id = ${tenantId}`,
  );
  if (!ws) throw new DomainError("not_found", "This workspace does not exist.");

  const taskNumbers: Array<{ dir: string; task_id: string }> = [];
  let tasks = 0;
  for await (const ids of tasksInRange(db, tenantId, range)) {
    for (const id of ids) {
      tasks += 1;
      taskNumbers.push({ dir: taskDir(tasks), task_id: id });
      await writeTask(under(sink, taskDir(tasks)), id);
    }
  }

  // Custody maps: the map with its eight layers, every published version, every exercise.
  const maps = sink.jsonl("maps/maps");
  for await (const map of rowsOf(
    db,
    (after, limit) =>
      sql`select id::text as k, to_jsonb(m) - 'tenant_id' as row from custody_maps m
        where tenant_id = ${tenantId} ${after ? sql`and id > ${after}::uuid` : sql``} order by id limit ${limit}`,
  )) {
    const layers = await queryRows<{ row: Record<string, unknown> }>(
      db,
      sql`select to_jsonb(l) - 'tenant_id' as row from custody_map_layers l
          where tenant_id = ${tenantId} and map_id = ${String(map.id)}::uuid order by position`,
    );
    await maps.write({ ...map, layers: layers.map((l) => l.row) });
  }
  await maps.end();
  const mapVersions = await stream(
    sink,
    "maps/versions",
    rowsOf(
      db,
      (after, limit) =>
        sql`select map_id::text || ':' || lpad(version::text, 10, '0') as k, to_jsonb(v) - 'tenant_id' as row
          from custody_map_versions v
          where tenant_id = ${tenantId}
            ${after ? sql`and (map_id::text || ':' || lpad(version::text, 10, '0')) > ${after}` : sql``}
          order by map_id::text || ':' || lpad(version::text, 10, '0') limit ${limit}`,
    ),
  );
  await stream(
    sink,
    "maps/exercises",
    rowsOf(
      db,
      (after, limit) =>
        sql`select id::text as k, to_jsonb(e) - 'tenant_id' as row from custody_exercises e
          where tenant_id = ${tenantId} ${after ? sql`and id > ${after}::uuid` : sql``} order by id limit ${limit}`,
    ),
  );
  // A layer's evidence items and comments (decision 0046).
  for (const [file, table] of [
    ["maps/evidence", "custody_map_evidence"],
    ["maps/comments", "custody_map_comments"],
  ] as const) {
    await stream(
      sink,
      file,
      rowsOf(
        db,
        (after, limit) =>
          sql`select id::text as k, to_jsonb(r) - 'tenant_id' as row from ${sql.identifier(table)} r
            where tenant_id = ${tenantId} ${after ? sql`and id > ${after}::uuid` : sql``} order by id limit ${limit}`,
      ),
    );
  }

  const policies = await stream(
    sink,
    "policies/versions",
    rowsOf(
      db,
      (after, limit) =>
        sql`select lpad(version::text, 10, '0') as k, to_jsonb(p) - 'tenant_id' as row from policy_versions p
          where tenant_id = ${tenantId} ${after ? sql`and version > ${Number(after)}` : sql``}
          order by version limit ${limit}`,
    ),
  );

  const [settings] = await queryRows<{ row: Record<string, unknown> | null }>(
    db,
    sql`select to_jsonb(s) - 'tenant_id' as row from approval_settings s where tenant_id = ${tenantId}`,
  );
  const rules = await queryRows<{ row: Record<string, unknown> }>(
    db,
    sql`select to_jsonb(r) - 'tenant_id' as row from approval_action_rules r where tenant_id = ${tenantId} order by action`,
  );
  await sink.addJson("settings/approvals.json", {
    settings: settings?.row ?? null,
    action_rules: rules.map((r) => r.row),
  });

  // People and keys: who they were, never a password hash or a key hash.
  const members = await stream(
    sink,
    "members/members",
    rowsOf(
      db,
      (after, limit) =>
        sql`select u.id::text as k,
                 jsonb_build_object('user_id', u.id, 'email', u.email, 'name', u.name, 'role', m.role,
                                    'created_at', m.created_at, 'revoked_at', m.revoked_at) as row
          from memberships m join users u on u.id = m.user_id
          where m.tenant_id = ${tenantId} ${after ? sql`and u.id > ${after}::uuid` : sql``}
          order by u.id limit ${limit}`,
    ),
  );
  await stream(
    sink,
    "members/api-keys",
    rowsOf(
      db,
      (after, limit) =>
        sql`select id::text as k,
                 jsonb_build_object('id', id, 'name', name, 'display_prefix', display_prefix, 'created_at', created_at,
                                    'last_used_at', last_used_at, 'revoked_at', revoked_at) as row
          from api_keys where tenant_id = ${tenantId} ${after ? sql`and id > ${after}::uuid` : sql``}
          order by id limit ${limit}`,
    ),
  );

  // The audit chain whole, in seq order: every entry with its hashed fields and its link, and the head they end at
  // (the chain is sealed first and read up to the head, decision 0035).
  await sealAudit(db, tenantId);
  const [head] = await queryRows<{ seq: string | number; hash: string }>(
    db,
    sql`select seq, hash from audit_heads where tenant_id = ${tenantId}`,
  );
  const upTo = head ? Number(head.seq) : 0;
  const entries = sink.jsonl("audit/entries");
  const links = sink.jsonl("audit/links");
  let audit = 0;
  for await (const r of rowsOf(
    db,
    (after, limit) =>
      sql`select lpad(seq::text, 20, '0') as k, to_jsonb(a) as row from audit_log a
        where tenant_id = ${tenantId} and seq <= ${upTo} ${after ? sql`and seq > ${Number(after)}` : sql``}
        order by seq limit ${limit}`,
  )) {
    const seq = Number(r.seq);
    await entries.write({
      seq,
      at: new Date(String(r.at)).toISOString(),
      actor_kind: r.actor_kind,
      actor_id: r.actor_id,
      actor_label: r.actor_label,
      action: r.action,
      target: r.target,
      details: r.details,
      prev_hash: r.prev_hash,
      hash: r.hash,
    });
    await links.write({ seq, prev_hash: r.prev_hash, hash: r.hash });
    audit += 1;
  }
  await entries.end();
  await links.end();
  // An empty chain ends at the genesis hash, as a task bundle says it (decision 0037).
  await sink.addJson("audit/head.json", { seq: upTo, hash: head?.hash ?? "0".repeat(64) });

  return {
    workspace: { id: ws.id, slug: ws.slug, name: ws.name },
    ...(ws.imported_from ? { imported_from: ws.imported_from } : {}),
    range,
    tasks: taskNumbers,
    counts: { tasks, map_versions: mapVersions, policy_versions: policies, members, audit_entries: audit },
  };
}
