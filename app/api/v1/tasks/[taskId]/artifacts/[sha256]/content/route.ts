import { artifactMaxBytes } from "@/lib/config/artifacts";
import { getArtifactDownload } from "@/lib/domain/artifacts/read";
import { uploadArtifactContent } from "@/lib/domain/artifacts/upload";
import { DomainError } from "@/lib/domain/errors";
import { readCappedBytes } from "@/lib/domain/web/read-capped";
import { apiRoute, otherMethods } from "@/lib/server/route";

type Params = { taskId: string; sha256: string };

function tooLarge(limit: number): DomainError {
  return new DomainError(
    "payload_too_large",
    `The artifact is larger than ${limit} bytes, the upload limit (CUSTODY_ARTIFACT_MAX_BYTES); nothing was stored.`,
    { limit },
  );
}

/**
 * PUT /api/v1/tasks/{task_id}/artifacts/{sha256}/content — the artifact's bytes as the body (any content type) → 201
 * `{sha256, size, created: true}`, or 200 `{…, created: false}` when the same bytes were already stored (nothing
 * written). Runtime API keys only (decision 0045). Errors: 401, 403 (a person), 404 (no such task), 413 (larger than
 * `CUSTODY_ARTIFACT_MAX_BYTES`, default 10 MiB), 422 `content_digest_mismatch` (the bytes hash to another digest;
 * details {sha256, computed_sha256, size}; nothing stored) or `validation_failed` (not a lower-case hex sha256).
 */
export const PUT = apiRoute<Params>(async ({ req, ctx, params }) => {
  const limit = artifactMaxBytes();
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const bytes = req.body ? await readCappedBytes(req.body, limit) : Buffer.alloc(0);
  if (bytes === null) throw tooLarge(limit);
  const result = await uploadArtifactContent(ctx, { taskId: params.taskId, sha256: params.sha256, bytes });
  return Response.json(result, { status: result.created ? 201 : 200 });
});

/**
 * GET /api/v1/tasks/{task_id}/artifacts/{sha256}/content → the bytes, as an attachment (`Content-Disposition:
 * attachment` with the ref's file name, the listed media type, `X-Content-Type-Options: nosniff`), so a browser saves
 * them and never renders them as a page. Errors: 401, 404 (no such task or listed artifact, or never uploaded), 409
 * `artifact_content_mismatch` (the stored bytes no longer hash to the digest: not served), 422 (not a sha256).
 */
export const GET = apiRoute<Params>(async ({ ctx, params }) => {
  const file = await getArtifactDownload(ctx, { taskId: params.taskId, sha256: params.sha256 });
  return new Response(new Uint8Array(file.bytes), {
    headers: {
      "content-type": file.contentType,
      "content-disposition": file.disposition,
      "content-length": String(file.bytes.length),
      "x-content-type-options": "nosniff",
      "cache-control": "private, no-store",
      "content-security-policy": "sandbox; default-src 'none'",
    },
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PATCH, DELETE, OPTIONS } = otherMethods("GET", "PUT");
