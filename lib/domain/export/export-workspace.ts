/**
 * `GET /api/v1/export?from=&to=` — the workspace bundle (docs/decisions/0038-workspace-export.md): the archive of
 * decision 0037 with `kind: "workspace"`, written while it is read, so memory stays flat whatever the workspace holds.
 */
import { createHash } from "node:crypto";
import { Transform, pipeline, type Readable } from "node:stream";
import { BundleWriter } from "@/lib/export/bundle-writer";
import { sql } from "drizzle-orm";
import { queryRows } from "@/db";
import { actorRef, authorize } from "../authz";
import type { PublicJwk } from "../crypto/signing";
import { notFound } from "../errors";
import type { SigningContext } from "../context";
import { recordBundle } from "./bundles";
import { parseExportRange, writeWorkspaceFiles, type BundleSink } from "./workspace";

/** What the route streams: the `.tar.gz` bytes and the file name to offer. */
export type WorkspaceExport = { output: Readable; filename: string };

/**
 * Starts a workspace export. The checks (role, range) happen before the first byte; a failure while writing ends the
 * archive early (the reader sees a truncated archive, never a signed one), and is logged by the caller's `onError`.
 * @param input `from` / `to`: ISO 8601 dates or times with a zone (task creation times; `to` exclusive, defaults to
 *   now; `from` defaults to `to` minus 366 days); `writeTask` writes one task's bundle files into the sink it gets.
 * The bytes are hashed as they pass; once the archive is complete (signed and flushed) its sha256 and size are recorded
 * in `export_bundles` as built but not verified (`verification.ok: null`) — the verifier holds a bundle whole, which
 * the server does not (decision 0038) — so the map's Export layer can link it. An aborted archive is not recorded.
 * @returns the archive as a byte stream and its file name (`<slug>-workspace-<date>.tar.gz`).
 * @throws DomainError forbidden (not an owner or admin), bad_request (a date that is not one), export_range_too_large
 *   (422, `details: {limit_days, value_days}`).
 */
export async function exportWorkspace(
  { db, actor, signingKey }: SigningContext,
  input: {
    from: string | null;
    to: string | null;
    writeTask: (sink: BundleSink, taskId: string) => Promise<void>;
    onError?: (err: unknown) => void;
  },
): Promise<WorkspaceExport> {
  authorize(actor, "workspace.export");
  const range = parseExportRange(input.from, input.to);
  const [ws] = await queryRows<{ slug: string; imported_from: { keys?: PublicJwk[] } | null }>(
    db,
    sql`select slug, imported_from from tenants where id = ${actor.tenantId}`,
  );
  if (!ws) throw notFound("Workspace");
  const createdAt = new Date().toISOString();
  // An imported workspace's checkpoints were signed by the keys of the server it came from (decision 0038).
  const extraKeys = ws.imported_from?.keys ?? [];
  const writer = new BundleWriter({
    key: signingKey,
    kind: "workspace",
    tenantId: actor.tenantId,
    createdAt,
    extraKeys,
  });
  const hash = createHash("sha256");
  let size = 0;
  // Hashes the archive as it passes; its end waits for the record, so a finished download is a recorded bundle.
  const output = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
    flush(done) {
      recordBundle(db, actor.tenantId, {
        digest: hash.digest("hex"),
        scope: "workspace",
        task_id: null,
        size_bytes: size,
        verification: { ok: null, checks: 0, first_failure: null },
        created_by: actorRef(actor).label,
      }).then(
        () => done(),
        (err: unknown) => {
          input.onError?.(err);
          done(err instanceof Error ? err : new Error(String(err)));
        },
      );
    },
  });
  pipeline(writer.output, output, () => {});
  void (async () => {
    try {
      const facts = await writeWorkspaceFiles(writer, db, actor.tenantId, range, input.writeTask);
      await writer.finish(facts);
    } catch (err) {
      input.onError?.(err);
      writer.abort(err instanceof Error ? err : new Error(String(err)));
    }
  })();
  return { output, filename: `${ws.slug}-workspace-${createdAt.slice(0, 10)}.tar.gz` };
}
