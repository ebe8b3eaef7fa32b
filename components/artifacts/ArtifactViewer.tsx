"use client";

/**
 * Shows one artifact's uploaded content safely (decision 0045): Markdown rendered without raw HTML (react-markdown
 * with `skipHtml`; images shown as their alt text, so nothing is fetched from elsewhere; links only with safe schemes),
 * JSON pretty-printed and text as it is, both in a <pre> that wraps long lines inside its box. The preview is capped
 * by the server; the download link serves the whole file as an attachment. Bytes that no longer hash to their digest
 * are a stop: nothing of them is shown.
 */
import ReactMarkdown, { defaultUrlTransform } from "react-markdown";
import { useArtifactPreview } from "@/lib/client/queries";

const BOX = "max-h-96 overflow-auto rounded border border-neutral-200 bg-neutral-50 p-3";

/** The stop shown where an artifact's stored bytes no longer hash to its digest. */
export function ArtifactMismatch({ refName, sha256 }: { refName: string; sha256: string }) {
  return (
    <p
      role="alert"
      className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900"
      data-testid="artifact-mismatch"
    >
      <span aria-hidden="true">✕ </span>
      <strong>Stop: {refName}</strong>&apos;s stored bytes no longer hash to its sha256{" "}
      <code className="font-mono text-xs break-all">{sha256.slice(0, 16)}…</code>: they were changed after the upload.
      They are not shown or served; upload the artifact again from the runtime that wrote it, or treat it as lost.
    </p>
  );
}

/** Preview and download of the artifact `sha256` of `taskId`, labelled by `label`. */
export function ArtifactViewer({ taskId, sha256, label }: { taskId: string; sha256: string; label: string }) {
  const q = useArtifactPreview(taskId, sha256);
  if (q.isPending) return <p className="text-sm text-neutral-600">Loading {label}…</p>;
  if (q.error) {
    return (
      <p role="alert" className="text-sm text-red-700">
        Could not load {label}: {q.error.message}{" "}
        <button type="button" className="underline" onClick={() => q.refetch()}>
          Retry
        </button>
      </p>
    );
  }
  const a = q.data;
  if (a.content === "mismatch") return <ArtifactMismatch refName={a.ref} sha256={a.sha256} />;
  if (a.content === "missing") {
    return (
      <p className="text-sm text-neutral-600" data-testid="artifact-missing">
        The runtime has not uploaded the bytes of {a.ref}; only its sha256 is known (
        <code className="font-mono text-xs">PUT …/artifacts/{"{sha256}"}/content</code>).
      </p>
    );
  }
  return (
    <div className="space-y-2" data-testid="artifact-viewer">
      {a.kind === "binary" || a.text === null ? (
        <p className="text-sm text-neutral-600">
          {a.media_type ?? "This file"} is not shown on the page; download it to open it.
        </p>
      ) : a.kind === "markdown" ? (
        <div className={`${BOX} md-view text-sm`} data-testid="artifact-markdown" role="document" aria-label={label}>
          <ReactMarkdown
            skipHtml
            urlTransform={(url) => defaultUrlTransform(url)}
            components={{
              img: ({ alt }) => <span className="text-neutral-600">[image{alt ? `: ${alt}` : ""}]</span>,
              a: ({ href, children }) => (
                <a href={href} rel="noopener noreferrer nofollow" className="underline">
                  {children}
                </a>
              ),
            }}
          >
            {a.text}
          </ReactMarkdown>
        </div>
      ) : (
        <pre
          className={`${BOX} font-mono text-xs whitespace-pre-wrap [overflow-wrap:anywhere]`}
          data-testid={a.kind === "json" ? "artifact-json" : "artifact-text"}
          aria-label={label}
          tabIndex={0}
        >
          {a.text}
        </pre>
      )}
      <p className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-neutral-600">
        {a.truncated ? <span>Showing the beginning only.</span> : null}
        <a
          href={a.download_url}
          download
          className="font-medium text-blue-800 underline"
          data-testid="artifact-download"
        >
          Download {a.ref.split("/").pop() || "artifact"}
        </a>
      </p>
    </div>
  );
}
