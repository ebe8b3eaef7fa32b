import { Readable } from "node:stream";
import { exportWorkspace } from "@/lib/domain/export/export-workspace";
import { writeTaskFiles } from "@/lib/domain/export/task-files";
import { apiRoute, otherMethods } from "@/lib/server/route";
import { withSigningKey } from "@/lib/server/verb-context";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/export?from=&to= → the workspace bundle, streamed as `application/gzip` with `Content-Disposition:
 * attachment` (decision 0038): every task created in `[from, to)` under `tasks/<nnnnnn>/` as its task bundle, the custody
 * maps with all versions and exercises, the policy versions, the approval settings, the members and API keys (no
 * password or key hashes), and the audit chain whole, signed as decision 0037's archive (`kind: "workspace"`); check it
 * with `npx run-custody verify`. `from`/`to`: ISO 8601 dates or times with a zone; `to` defaults to now, `from` to 366
 * days before `to`. Owners and admins.
 * Errors: 400 (a date that is not one, from after to), 401, 403 (another role, a runtime key), 422
 * `export_range_too_large` (over 366 days; `details: {limit_days, value_days}`). A failure after the first byte ends
 * the archive early: it then has no attestation and fails verification.
 */
export const GET = apiRoute(async ({ req, ctx, requestId }) => {
  const url = new URL(req.url);
  const out = await exportWorkspace(withSigningKey(ctx), {
    from: url.searchParams.get("from"),
    to: url.searchParams.get("to"),
    writeTask: (sink, taskId) => writeTaskFiles(ctx.db, sink, ctx.actor.tenantId, taskId),
    onError: (err) => console.error(`[${requestId}] workspace export stopped:`, err),
  });
  return new Response(Readable.toWeb(out.output) as ReadableStream<Uint8Array>, {
    headers: {
      "content-type": "application/gzip",
      "content-disposition": `attachment; filename="${out.filename}"`,
      "cache-control": "no-store",
    },
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
