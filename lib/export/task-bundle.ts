/**
 * A task's evidence bundle (docs/decisions/0037-evidence-bundles.md; `GET /api/v1/tasks/{id}/export`): every stored
 * record of the task, read page by page (keyset, {@link PAGE} rows per statement) and written as it is read by
 * {@link BundleWriter}. The cut point — the task's latest checkpoint version and the audit head — is read first, so
 * records written while the bundle streams do not make it inconsistent.
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { sql, type SQL } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { findLiveTask } from "@/lib/domain/tasks/deleted";
import { sealAudit } from "../domain/audit/append";
import { taskAuditCondition } from "../domain/audit/read";
import { authorize } from "../domain/authz";
import type { SigningContext } from "../domain/context";
import { notFound } from "../domain/errors";
import { checkTaskId } from "../domain/tasks/read";
import { BundleWriter, type JsonlSink } from "./bundle-writer";
import { databaseArtifactStore } from "../domain/artifacts/artifact-store";
import {
  ARTIFACT_BYTES_LIMITS,
  ARTIFACT_BYTES_STREAM,
  artifactBytesName,
  INVENTORY_JSON_FILE,
  INVENTORY_MD_FILE,
  type ArtifactBytesOmission,
} from "./bundle-format";
import { inventoryMarkdown, taskInventory } from "./inventory";

/** Rows per statement while streaming. */
const PAGE = 500;

type Row = Record<string, unknown>;

/**
 * Reads rows page by page: `fetch(after)` returns the rows after the keyset position `after` (null for the first page),
 * `keyOf` gives a row's position; each row goes to `sink` as `map(row)`.
 */
async function copyPages(
  sink: JsonlSink,
  fetch: (after: Row | null) => Promise<Row[]>,
  map: (row: Row) => unknown = (r) => r,
): Promise<number> {
  let after: Row | null = null;
  let n = 0;
  for (;;) {
    const rows = await fetch(after);
    for (const row of rows) {
      await sink.write(map(row));
      n++;
    }
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!;
  }
  await sink.end();
  return n;
}

/** `row_to_json` of a subquery's rows without the tenant id (the manifest has it): timestamps as stored, ISO 8601. */
async function jsonRows(db: Db, query: SQL): Promise<Row[]> {
  const rows = await queryRows<{ r: Row }>(db, sql`select row_to_json(x) as r from (${query}) x`);
  return rows.map((row) => {
    const r = typeof row.r === "string" ? (JSON.parse(row.r) as Row) : row.r;
    delete r.tenant_id;
    return r;
  });
}

/**
 * Opens the export of one task: checks the actor and that the task exists (before any byte is sent), then streams the
 * bundle.
 * @returns the `.tar.gz` byte stream and a file name `task-<id>-<time>.tar.gz`.
 * @throws DomainError forbidden (authz `tasks.export`), bad_request (task id), not_found (missing task, or another
 *   tenant's: the walls hide it).
 */
export async function openTaskExport(
  { db, actor, signingKey }: SigningContext,
  { taskId }: { taskId: string },
): Promise<{ stream: Readable; filename: string }> {
  authorize(actor, "tasks.export");
  checkTaskId(taskId);
  const task = await findLiveTask(db, actor.tenantId, taskId);
  if (!task) throw notFound(`Task ${taskId}`);
  const tenantId = actor.tenantId;
  // Entries a crash left pending join the chain before it is exported (decision 0020).
  await sealAudit(db, tenantId);
  const [head] = await queryRows<{ seq: string | number; hash: string }>(
    db,
    sql`select seq, hash from audit_heads where tenant_id = ${tenantId}`,
  );
  const createdAt = new Date().toISOString();
  const writer = new BundleWriter({ key: signingKey, kind: "task", tenantId, taskId, createdAt });
  const filename = `task-${taskId.replace(/[^A-Za-z0-9._-]/g, "_")}-${createdAt.replace(/[:.]/g, "-")}.tar.gz`;
  const cut = {
    tenantId,
    taskId,
    latestVersion: Number(task.latest_version),
    head: head ? { seq: Number(head.seq), hash: head.hash } : { seq: 0, hash: "0".repeat(64) },
  };
  writeTaskBundle(db, writer, cut)
    .then((counts) =>
      writer.finish({
        counts,
        audit_head: cut.head,
        ...(counts.artifact_bytes_omitted
          ? {
              artifact_bytes_note: `${counts.artifact_bytes_omitted} artifact(s)' bytes are not in this bundle; ${ARTIFACT_BYTES_STREAM}/*.jsonl says why for each (not uploaded, changed in the store, or over the cap of ${ARTIFACT_BYTES_LIMITS.maxFileBytes} bytes per artifact and ${ARTIFACT_BYTES_LIMITS.maxTaskBytes} per task).`,
            }
          : {}),
      }),
    )
    .catch((err: unknown) => writer.abort(err instanceof Error ? err : new Error(String(err))));
  return { stream: writer.output, filename };
}

/**
 * Writes one task's files into `w` (the writer, or a view of it under a task's directory in a workspace bundle).
 * @returns the record count of each stream (for `bundle.json`). `cut.inWorkspace`: the task is part of a workspace bundle, which holds the audit chain whole at its root
 * (decision 0038), so the task's own audit files are left out.
 */
export async function writeTaskBundle(
  db: Db,
  w: Pick<BundleWriter, "addFile" | "addJson" | "jsonl">,
  cut: {
    tenantId: string;
    taskId: string;
    latestVersion: number;
    head: { seq: number; hash: string };
    inWorkspace?: boolean;
  },
): Promise<Record<string, number>> {
  const { tenantId, taskId } = cut;
  const own = sql`tenant_id = ${tenantId} and task_id = ${taskId}`;
  const [taskRow] = await jsonRows(
    db,
    sql`select task_id, principal, policy_version, phase, current_attempt, created_at, updated_at,
               ${cut.latestVersion}::int as latest_version
        from tasks where ${own}`,
  );
  await w.addJson("task.json", taskRow);

  const counts: Record<string, number> = {};
  counts.checkpoints = await copyPages(w.jsonl("checkpoints"), (after) =>
    jsonRows(
      db,
      sql`select task_id, version, attempt, record, digest, signature, key_id, signature_format, binding_signature,
                 created_at
          from task_checkpoints where ${own} and version <= ${cut.latestVersion}
            ${after ? sql`and version > ${Number(after.version)}` : sql``}
          order by version limit ${PAGE}`,
    ),
  );
  counts.events = await copyPages(w.jsonl("events"), (after) =>
    jsonRows(
      db,
      sql`select task_id, event_id, seq, plane, type, occurred_at, received_at, environment_id, attempt, actor, attrs,
                 redaction_count, redaction_kinds
          from events where ${own}
            ${after ? sql`and (occurred_at, event_id) > (${String(after.occurred_at)}::timestamptz, ${String(after.event_id)})` : sql``}
          order by occurred_at, event_id limit ${PAGE}`,
    ),
  );
  counts.side_effects = await copyPages(w.jsonl("side-effects"), (after) =>
    jsonRows(
      db,
      sql`select task_id, name, idempotency_key, status, tool, action, mutation, payload_digest, intent_at,
                 intent_attempt, lease_expires_at, retry_status, seal, receipt, last_reconcile, last_not_applied, repeats,
                 status_reason, origin, call_id, created_at, updated_at
          from side_effects where ${own} ${after ? sql`and name > ${String(after.name)}` : sql``}
          order by name limit ${PAGE}`,
    ),
  );
  counts.refused_receipts = await copyPages(w.jsonl("refused-receipts"), (after) =>
    jsonRows(
      db,
      sql`select * from unapplied_receipts where ${own} ${after ? sql`and id > ${String(after.id)}::uuid` : sql``}
          order by id limit ${PAGE}`,
    ),
  );
  counts.approvals = await copyPages(w.jsonl("approvals"), (after) =>
    jsonRows(
      db,
      sql`select * from approval_requests where ${own} ${after ? sql`and id > ${String(after.id)}::uuid` : sql``}
          order by id limit ${PAGE}`,
    ),
  );
  counts.gate_asks = await copyPages(w.jsonl("gate-asks"), (after) =>
    jsonRows(
      db,
      sql`select * from gate_asks where ${own} ${after ? sql`and attempt > ${Number(after.attempt)}` : sql``}
          order by attempt limit ${PAGE}`,
    ),
  );
  counts.artifacts = await copyPages(w.jsonl("artifacts"), (after) =>
    jsonRows(
      db,
      sql`select task_id, object_ref, sha256, media_type, size_bytes, first_version, created_at from artifacts
          where ${own}
            ${after ? sql`and (object_ref, sha256) > (${String(after.object_ref)}, ${String(after.sha256)})` : sql``}
          order by object_ref, sha256 limit ${PAGE}`,
    ),
  );
  const bytes = await writeArtifactBytes(db, w, tenantId, taskId);
  counts.artifact_bytes = bytes.records;
  counts.artifact_bytes_included = bytes.included;
  counts.artifact_bytes_omitted = bytes.omitted;

  const schemaVersions = new Set<string>();
  if (!cut.inWorkspace) await writeTaskAudit(db, w, cut, counts, schemaVersions);

  counts.custody_map_versions = await copyPages(
    w.jsonl("custody-maps"),
    (after) =>
      jsonRows(
        db,
        sql`select v.map_id, v.version, m.workflow as map_workflow, m.title as map_title, v.snapshot, v.published_by, v.published_at
            from custody_map_versions v join custody_maps m on m.tenant_id = v.tenant_id and m.id = v.map_id
            where v.tenant_id = ${tenantId}
              and jsonb_path_exists(v.snapshot, '$.** ? (@.kind == "task" && @.ref == $t)', jsonb_build_object('t', ${taskId}::text))
              ${after ? sql`and (v.map_id, v.version) > (${String(after.map_id)}::uuid, ${Number(after.version)})` : sql``}
            order by v.map_id, v.version limit ${PAGE}`,
      ),
    (r) => ({ task_id: taskId, ...r }),
  );
  counts.exercises = await copyPages(
    w.jsonl("exercises"),
    (after) =>
      jsonRows(
        db,
        sql`select * from custody_exercises
            where tenant_id = ${tenantId}
              and jsonb_path_exists(steps, '$[*] ? (@.task_id == $t)', jsonb_build_object('t', ${taskId}::text))
              ${after ? sql`and id > ${String(after.id)}::uuid` : sql``}
            order by id limit ${PAGE}`,
      ),
    (r) => ({ task_id: taskId, exercise_id: r.id, ...r, id: undefined }),
  );

  const inventory = taskInventory({ counts, runStateSchemaVersions: [...schemaVersions] });
  await w.addJson(INVENTORY_JSON_FILE, inventory);
  await w.addFile(INVENTORY_MD_FILE, inventoryMarkdown(inventory));
  return counts;
}

/** The task's audit entries with their chain links and the head they lead to (a task bundle's own audit files). */
async function writeTaskAudit(
  db: Db,
  w: Pick<BundleWriter, "addFile" | "addJson" | "jsonl">,
  cut: { tenantId: string; taskId: string; head: { seq: number; hash: string } },
  counts: Record<string, number>,
  schemaVersions: Set<string>,
): Promise<void> {
  const { tenantId, taskId } = cut;
  // The task's audit entries: its own targets, and its approvals'.
  const mine = taskAuditCondition(tenantId, taskId);
  let firstSeq: number | null = null;
  counts.audit_entries = await copyPages(
    w.jsonl("audit/entries"),
    (after) =>
      queryRows<Row>(
        db,
        sql`select seq, at, actor_kind, actor_id, actor_label, action, target, details, prev_hash, hash from audit_log
            where tenant_id = ${tenantId} and seq <= ${cut.head.seq} and ${mine}
              ${after ? sql`and seq > ${Number(after.seq)}` : sql``}
            order by seq limit ${PAGE}`,
      ),
    (r) => {
      const seq = Number(r.seq);
      firstSeq ??= seq;
      const details = (r.details ?? {}) as Record<string, unknown>;
      if (r.action === "run_state.imported" && typeof details.schema_version === "string") {
        schemaVersions.add(details.schema_version);
      }
      return {
        task_id: taskId,
        seq,
        at: new Date(r.at as string).toISOString(),
        actor_kind: r.actor_kind,
        actor_id: r.actor_id,
        actor_label: r.actor_label,
        action: r.action,
        target: r.target,
        details,
        prev_hash: r.prev_hash,
        hash: r.hash,
      };
    },
  );
  const from: number = firstSeq ?? cut.head.seq + 1;
  counts.audit_links = await copyPages(
    w.jsonl("audit/links"),
    (after) =>
      queryRows<Row>(
        db,
        sql`select seq, prev_hash, hash from audit_log
            where tenant_id = ${tenantId} and seq >= ${after ? Number(after.seq) + 1 : from} and seq <= ${cut.head.seq}
            order by seq limit ${PAGE}`,
      ),
    (r) => ({ task_id: taskId, seq: Number(r.seq), prev_hash: r.prev_hash, hash: r.hash }),
  );
  await w.addJson("audit/head.json", { tenant_id: tenantId, seq: cut.head.seq, hash: cut.head.hash });
}

/**
 * Writes the task's artifact bytes (decision 0050): for each distinct digest its artifacts list, the stored bytes as
 * `artifact-bytes/<sha256>` when they were uploaded, still hash to the digest, and fit the caps
 * ({@link ARTIFACT_BYTES_LIMITS}); and one `artifact-bytes` record per digest saying whether they are included and,
 * when not, why. Bytes are read one artifact at a time.
 * @returns how many digests were listed, included and omitted.
 */
async function writeArtifactBytes(
  db: Db,
  w: Pick<BundleWriter, "addFile" | "jsonl">,
  tenantId: string,
  taskId: string,
): Promise<{ records: number; included: number; omitted: number }> {
  const digests = (
    await queryRows<{ sha256: string }>(
      db,
      sql`select distinct sha256 from artifacts where tenant_id = ${tenantId} and task_id = ${taskId}
          order by sha256 limit 10000`,
    )
  ).map((r) => r.sha256);
  const store = databaseArtifactStore(db);
  const stored = await store.has(tenantId, digests);
  const sink = w.jsonl(ARTIFACT_BYTES_STREAM);
  let total = 0;
  let included = 0;
  for (const sha256 of digests) {
    const info = stored.get(sha256);
    let reason: ArtifactBytesOmission | null = null;
    let bytes: Buffer | null = null;
    if (!info || !/^[0-9a-f]{64}$/.test(sha256)) reason = "not_uploaded";
    else if (!info.intact) reason = "changed_in_store";
    else if (info.size > ARTIFACT_BYTES_LIMITS.maxFileBytes) reason = "larger_than_file_cap";
    else if (total + info.size > ARTIFACT_BYTES_LIMITS.maxTaskBytes) reason = "task_cap_reached";
    else {
      const got = await store.get(tenantId, sha256);
      if (!got) reason = "not_uploaded";
      else if (createHash("sha256").update(got.bytes).digest("hex") !== sha256) reason = "changed_in_store";
      else bytes = got.bytes;
    }
    if (bytes) {
      await w.addFile(artifactBytesName(sha256), bytes);
      total += bytes.length;
      included++;
    }
    await sink.write({
      task_id: taskId,
      sha256,
      size_bytes: info?.size ?? null,
      included: bytes !== null,
      file: bytes ? artifactBytesName(sha256) : null,
      omitted_reason: reason,
    });
  }
  await sink.end();
  return { records: digests.length, included, omitted: digests.length - included };
}
