/**
 * Reading a task's artifacts with their uploaded bytes (decision 0045): whether the bytes are there and still hash to
 * their digest, a bounded preview for the task and approval pages (Markdown, JSON, text), and the download. Bytes
 * that no longer hash to their digest are never shown or served: the pages show a stop instead.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import type { ArtifactPreview } from "@/lib/contract/api";
import { authorize } from "../authz";
import type { VerbContext } from "../context";
import { DomainError, notFound } from "../errors";
import * as q from "@/db/queries/tasks";
import { findLiveTask } from "../tasks/deleted";
import { checkTaskId } from "../tasks/read";
import { databaseArtifactStore } from "./artifact-store";
import { checkSha256 } from "./upload";
import { parseJsonWithin } from "../json/text";

/** How the pages show an artifact's text: rendered Markdown (no raw HTML), pretty JSON, plain text, or not at all. */
type PreviewKind = ArtifactPreview["kind"];

/** The most text a preview carries (the page links the download for the rest). */
export const PREVIEW_MAX_CHARS = 64 * 1024;

/** A media type without parameters, when it is a well-formed `type/subtype`; else null. */
function plainMediaType(mediaType: string | null): string | null {
  const t = mediaType?.split(";")[0]?.trim().toLowerCase() ?? "";
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(t) ? t : null;
}

/** How an artifact is previewed, from its media type, else its ref's extension. */
export function previewKind(ref: string, mediaType: string | null): PreviewKind {
  const t = plainMediaType(mediaType);
  const ext = path.posix.extname(ref).toLowerCase();
  if (t === "text/markdown" || (!t && (ext === ".md" || ext === ".markdown"))) return "markdown";
  if (t === "application/json" || t?.endsWith("+json") || (!t && ext === ".json")) return "json";
  if (t?.startsWith("text/") || (!t && [".txt", ".log", ".csv", ".yaml", ".yml"].includes(ext))) return "text";
  return "binary";
}

/** The content type a download is served with: the listed media type when well formed, else by kind. */
export function downloadContentType(ref: string, mediaType: string | null): string {
  const t = plainMediaType(mediaType);
  const kind = previewKind(ref, mediaType);
  const base =
    t ??
    (kind === "markdown"
      ? "text/markdown"
      : kind === "json"
        ? "application/json"
        : kind === "text"
          ? "text/plain"
          : "application/octet-stream");
  return base.startsWith("text/") ? `${base}; charset=utf-8` : base;
}

/** `Content-Disposition: attachment` with the ref's last segment as the file name (RFC 6266, ASCII fallback). */
export function attachmentDisposition(ref: string): string {
  const name = path.posix.basename(ref) || "artifact";
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** The listed artifact of a task with this digest (the first version that listed it). */
async function listed(ctx: VerbContext, taskId: string, sha256: string) {
  const { db, actor } = ctx;
  authorize(actor, "tasks.read");
  checkTaskId(taskId);
  checkSha256(sha256);
  if (!(await findLiveTask(db, actor.tenantId, taskId))) throw notFound(`Task ${taskId}`);
  const rows = await q.listArtifacts(db, actor.tenantId, taskId);
  const row = rows.filter((r) => r.sha256 === sha256).sort((a, b) => a.first_version - b.first_version)[0];
  if (!row) throw notFound(`Artifact ${sha256} of task ${taskId}`);
  return row;
}

function mismatch(ref: string, sha256: string): DomainError {
  return new DomainError(
    "artifact_content_mismatch",
    `The stored bytes of ${ref} no longer hash to ${sha256}: they were changed after the upload. They are not served; upload the artifact again from the runtime that wrote it, or treat the artifact as lost.`,
    { ref, sha256 },
  );
}

/** Cuts `text` to at most `max` characters without splitting a surrogate pair. */
function cap(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), truncated: true };
}

/**
 * One artifact of a task with a bounded preview of its bytes.
 * @returns the preview; `content` missing (never uploaded) or mismatch (changed after upload) carry no text.
 * @throws DomainError not_found (no such task, or the task lists no artifact with that digest), validation_failed.
 */
export async function getArtifactPreview(
  ctx: VerbContext,
  { taskId, sha256 }: { taskId: string; sha256: string },
): Promise<ArtifactPreview> {
  const row = await listed(ctx, taskId, sha256);
  const kind = previewKind(row.object_ref, row.media_type);
  const base = {
    ref: row.object_ref,
    sha256,
    media_type: row.media_type,
    size: row.size_bytes === null ? null : Number(row.size_bytes),
    kind,
    download_url: `/api/v1/tasks/${encodeURIComponent(taskId)}/artifacts/${sha256}/content`,
  };
  const stored = await databaseArtifactStore(ctx.db).get(ctx.actor.tenantId, sha256);
  if (!stored) return { ...base, content: "missing", text: null, truncated: false };
  if (createHash("sha256").update(stored.bytes).digest("hex") !== sha256) {
    return { ...base, content: "mismatch", text: null, truncated: false };
  }
  if (kind === "binary") return { ...base, size: stored.size, content: "stored", text: null, truncated: false };
  // Only the head is decoded: a preview never holds more than its cap, however large the artifact.
  const head = stored.bytes.subarray(0, PREVIEW_MAX_CHARS * 4).toString("utf8");
  let text = head;
  if (kind === "json" && stored.bytes.length <= PREVIEW_MAX_CHARS * 4) {
    // Not JSON after all, or nested deeper than a person could read: shown as the text it is, unparsed.
    const read = parseJsonWithin(head, 64);
    if (read) text = JSON.stringify(read.value, null, 2);
  }
  const capped = cap(text, PREVIEW_MAX_CHARS);
  return {
    ...base,
    size: stored.size,
    content: "stored",
    text: capped.text,
    truncated: capped.truncated || stored.bytes.length > PREVIEW_MAX_CHARS * 4,
  };
}

/**
 * An artifact's bytes to download, with the headers that make a browser save them rather than show them.
 * @throws DomainError not_found (no such task or artifact, or its bytes were never uploaded), artifact_content_mismatch
 *   (409: the stored bytes no longer hash to the digest; nothing is served).
 */
export async function getArtifactDownload(
  ctx: VerbContext,
  { taskId, sha256 }: { taskId: string; sha256: string },
): Promise<{ bytes: Buffer; contentType: string; disposition: string }> {
  const row = await listed(ctx, taskId, sha256);
  const stored = await databaseArtifactStore(ctx.db).get(ctx.actor.tenantId, sha256);
  if (!stored) {
    throw new DomainError("not_found", `The bytes of ${row.object_ref} were never uploaded; only its digest is known.`);
  }
  if (createHash("sha256").update(stored.bytes).digest("hex") !== sha256) throw mismatch(row.object_ref, sha256);
  return {
    bytes: stored.bytes,
    contentType: downloadContentType(row.object_ref, row.media_type),
    disposition: attachmentDisposition(row.object_ref),
  };
}
