/**
 * Restores a workspace bundle on another server (docs/decisions/0038-workspace-export.md): verify first (the offline
 * verifier, lib/export/verify.ts), then create the workspace under the bundle's own workspace id — every checkpoint
 * binding and audit hash names that id — and restore its tasks (each stream of its task bundle), custody maps with
 * versions and exercises, policy versions, approval settings and the audit chain as they were, in one transaction. The
 * workspace is read-only from then on (`tenants.read_only_since`), and remembers the bundle's digest and the public
 * keys that signed its checkpoints, so that its re-export verifies. People are not restored (no password travels):
 * `npm run setup -- --workspace <slug> --owner <email>` adds an owner afterwards.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { ARTIFACT_BYTES_STREAM, artifactBytesName } from "@/lib/export/bundle-format";
import { readBundleArchive, type ArchiveFiles } from "@/lib/export/read-archive";
import { verifyBundle } from "@/lib/export/verify";
import { fillTaskWorkflows } from "@/db/queries/tasks";
import { DomainError } from "../errors";
import { retentionClass } from "../events/catalogue";

type Rec = Record<string, unknown>;

/** Task bundle streams and the tables they restore into (decision 0037's layout). */
const TASK_STREAMS: ReadonlyArray<[stream: string, table: string]> = [
  ["checkpoints", "task_checkpoints"],
  ["events", "events"],
  ["side-effects", "side_effects"],
  ["refused-receipts", "unapplied_receipts"],
  ["approvals", "approval_requests"],
  ["gate-asks", "gate_asks"],
  ["artifacts", "artifacts"],
];

/** What an import did. */
export type ImportResult = {
  tenant_id: string;
  slug: string;
  name: string;
  digest: string;
  tasks: number;
  restored: Record<string, number>;
};

const text = (files: ArchiveFiles, name: string) => Buffer.from(files.get(name) ?? new Uint8Array()).toString("utf8");
const json = (files: ArchiveFiles, name: string) => JSON.parse(text(files, name)) as Rec;

/** The records of JSON Lines stream `stream`, part by part. */
function* records(files: ArchiveFiles, stream: string): Generator<Rec> {
  for (let n = 1; ; n++) {
    const part = files.get(`${stream}/${String(n).padStart(6, "0")}.jsonl`);
    if (!part) return;
    for (const line of Buffer.from(part).toString("utf8").split("\n")) if (line) yield JSON.parse(line) as Rec;
  }
}

/**
 * Imports a workspace bundle into a new, read-only workspace.
 * @param db the owner's database handle (a script's: the workspace does not exist yet, so no wall applies).
 * @param input `bundle`: the `.tar.gz` bytes; `slug`: the new workspace's slug (default the bundle's).
 * @returns the workspace made and how many rows each table received.
 * @throws DomainError bundle_invalid (422: the verifier's first failure, or not a workspace bundle),
 *   workspace_not_empty (409: this server already has the workspace's id or slug).
 */
export async function importWorkspaceBundle(
  db: Db,
  input: { bundle: Uint8Array; slug?: string },
): Promise<ImportResult> {
  const report = await verifyBundle(input.bundle);
  if (!report.ok) {
    const f = report.first_failure;
    throw new DomainError(
      "bundle_invalid",
      `The bundle does not verify, so nothing was imported: ${f?.check}: ${f?.file ? `${f.file}: ` : ""}${f?.message}`,
      { first_failure: f },
    );
  }
  const files = await readBundleArchive(input.bundle);
  const manifest = json(files, "bundle.json");
  if (manifest.kind !== "workspace") {
    throw new DomainError("bundle_invalid", "This is a task bundle; only a workspace bundle can be imported.");
  }
  const tenantId = String(manifest.tenant_id);
  const ws = (manifest.workspace ?? {}) as { slug?: string; name?: string };
  const slug = input.slug ?? String(ws.slug);
  const name = String(ws.name ?? slug);
  const digest = createHash("sha256").update(input.bundle).digest("hex");
  const keys = (json(files, "keys.jwks.json").keys ?? []) as unknown[];

  return db.transaction(async (tx) => {
    const taken = await queryRows(tx, sql`select 1 from tenants where id = ${tenantId}::uuid or slug = ${slug}`);
    if (taken.length) {
      throw new DomainError(
        "workspace_not_empty",
        `This server already has workspace ${slug} or the bundle's workspace id ${tenantId}; import into a server without it.`,
      );
    }
    await tx.execute(sql`insert into tenants (id, slug, name, read_only_since, imported_from)
      values (${tenantId}::uuid, ${slug}, ${name}, now(),
              ${JSON.stringify({ digest, slug: ws.slug, tenant_id: tenantId, exported_at: manifest.created_at, keys })}::jsonb)`);
    const restored: Record<string, number> = {};
    const columns = new Map<string, Set<string>>();
    const put = async (table: string, row: Rec) => {
      let cols = columns.get(table);
      if (!cols) {
        const rows = await queryRows<{ column_name: string }>(
          tx,
          sql`select column_name from information_schema.columns where table_schema = 'public' and table_name = ${table}`,
        );
        cols = new Set(rows.map((r) => r.column_name));
        columns.set(table, cols);
      }
      const full: Rec = { ...row, tenant_id: tenantId };
      // An event goes to the partition its type belongs to, and its id is taken (decision 0054).
      if (table === "events") {
        full.retention_class = retentionClass(String(full.type));
        await tx.execute(
          sql`insert into event_ids (tenant_id, event_id) values (${tenantId}, ${String(full.event_id)}) on conflict do nothing`,
        );
      }
      const names = Object.keys(full).filter((k) => cols.has(k) && full[k] !== undefined);
      const list = sql.raw(names.map((n) => `"${n}"`).join(", "));
      await tx.execute(sql`insert into ${sql.identifier(table)} (${list}) overriding system value
        select ${list} from jsonb_populate_record(null::${sql.identifier(table)}, ${JSON.stringify(full)}::jsonb)`);
      restored[table] = (restored[table] ?? 0) + 1;
    };

    const tasks = (manifest.tasks ?? []) as Array<{ dir: string; task_id: string }>;
    for (const t of tasks) {
      await put("tasks", json(files, `${t.dir}/task.json`));
      for (const [stream, table] of TASK_STREAMS) {
        for (const r of records(files, `${t.dir}/${stream}`)) await put(table, r);
      }
      // Artifact bytes the bundle carries (decision 0050). The verifier checked each against its digest; they are
      // hashed again here, so no bytes are ever stored under a digest they do not have.
      for (const r of records(files, `${t.dir}/${ARTIFACT_BYTES_STREAM}`)) {
        const bytes = r.included === true ? files.get(`${t.dir}/${artifactBytesName(String(r.sha256))}`) : undefined;
        if (!bytes) continue;
        if (createHash("sha256").update(bytes).digest("hex") !== r.sha256)
          throw new DomainError(
            "bundle_invalid",
            `The bytes of artifact ${String(r.sha256)} do not hash to that digest.`,
          );
        await tx.execute(sql`insert into artifact_contents (tenant_id, sha256, size_bytes, bytes)
          values (${tenantId}::uuid, ${String(r.sha256)}, ${bytes.length}, ${Buffer.from(bytes)})
          on conflict (tenant_id, sha256) do nothing`);
        restored.artifact_contents = (restored.artifact_contents ?? 0) + 1;
      }
    }
    // A task bundle's task.json carries no workflow: it comes from the restored task.created events, as on ingest.
    await fillTaskWorkflows(tx, tenantId);
    for (const m of records(files, "maps/maps")) {
      const { layers, ...map } = m as Rec & { layers?: Rec[] };
      await put("custody_maps", map);
      for (const l of layers ?? []) await put("custody_map_layers", l);
    }
    for (const r of records(files, "maps/versions")) await put("custody_map_versions", r);
    for (const r of records(files, "maps/exercises")) await put("custody_exercises", r);
    for (const r of records(files, "maps/evidence")) await put("custody_map_evidence", r);
    for (const r of records(files, "maps/comments")) await put("custody_map_comments", r);
    for (const r of records(files, "policies/versions")) await put("policy_versions", r);
    const settings = json(files, "settings/approvals.json") as { settings: Rec | null; action_rules: Rec[] };
    if (settings.settings) await put("approval_settings", settings.settings);
    for (const r of settings.action_rules) await put("approval_action_rules", r);
    let last: Rec | null = null;
    for (const e of records(files, "audit/entries")) {
      await put("audit_log", e);
      last = e;
    }
    if (last) {
      await tx.execute(sql`insert into audit_heads (tenant_id, seq, prev_hash, hash)
        values (${tenantId}::uuid, ${Number(last.seq)}, ${String(last.prev_hash)}, ${String(last.hash)})`);
    }
    return { tenant_id: tenantId, slug, name, digest, tasks: tasks.length, restored };
  });
}
