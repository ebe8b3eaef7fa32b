"use client";

/**
 * Starts a workspace export (`GET /api/v1/export?from=&to=`) and reads the archive as it streams: past one second it
 * shows the size received so far, then offers the file with its sha256 (computed here; the server records the same
 * digest as an exported, not yet verified bundle — decision 0038). A refusal shows the server's message (e.g. a range
 * over the limit).
 */
import { useRef, useState } from "react";

type State =
  | { kind: "idle" }
  | { kind: "running"; bytes: number; slow: boolean }
  | { kind: "done"; bytes: number; url: string; name: string; sha256: string; seconds: number }
  | { kind: "failed"; message: string };

const input = "rounded-md border border-neutral-300 px-2 py-1.5 text-sm";
const primary = "rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50";

/** A byte count as people read it: 512 B, 1.5 KiB, 12.3 MiB. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB"];
  let v = bytes / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

const today = () => new Date().toISOString().slice(0, 10);
const yearAgo = () => new Date(Date.now() - 365 * 86_400_000).toISOString().slice(0, 10);

export function ExportClient() {
  const [from, setFrom] = useState(yearAgo);
  const [to, setTo] = useState(today);
  const [state, setState] = useState<State>({ kind: "idle" });
  const abort = useRef<AbortController | null>(null);

  async function start() {
    const controller = new AbortController();
    abort.current = controller;
    const startedAt = Date.now();
    setState({ kind: "running", bytes: 0, slow: false });
    try {
      // `to` is a day: the export covers it whole.
      const end = new Date(`${to}T00:00:00Z`);
      end.setUTCDate(end.getUTCDate() + 1);
      const qs = new URLSearchParams({ from: `${from}T00:00:00Z`, to: end.toISOString() });
      const res = await fetch(`/api/v1/export?${qs}`, { signal: controller.signal });
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
        setState({ kind: "failed", message: body?.error?.message ?? `The export was refused (${res.status}).` });
        return;
      }
      const reader = res.body.getReader();
      const chunks: Uint8Array<ArrayBuffer>[] = [];
      let bytes = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value as Uint8Array<ArrayBuffer>);
        bytes += value.byteLength;
        setState({ kind: "running", bytes, slow: Date.now() - startedAt > 1000 });
      }
      const blob = new Blob(chunks, { type: "application/gzip" });
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await blob.arrayBuffer()));
      const sha256 = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
      const name =
        /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? "workspace-bundle.tar.gz";
      setState({
        kind: "done",
        bytes,
        url: URL.createObjectURL(blob),
        name,
        sha256,
        seconds: (Date.now() - startedAt) / 1000,
      });
    } catch (err) {
      setState({
        kind: "failed",
        message: controller.signal.aborted ? "The export was cancelled." : `The export stopped: ${String(err)}`,
      });
    } finally {
      abort.current = null;
    }
  }

  return (
    <section aria-labelledby="export-h" className="space-y-3 rounded-lg border border-neutral-200 bg-white p-3">
      <h2 id="export-h" className="text-sm font-semibold">
        Tasks created
      </h2>
      <div className="flex flex-wrap items-end gap-3">
        <label className="text-sm" htmlFor="export-from">
          From
          <input
            id="export-from"
            type="date"
            className={`ml-2 ${input}`}
            value={from}
            onChange={(e) => setFrom(e.target.value)}
          />
        </label>
        <label className="text-sm" htmlFor="export-to">
          To (inclusive)
          <input
            id="export-to"
            type="date"
            className={`ml-2 ${input}`}
            value={to}
            onChange={(e) => setTo(e.target.value)}
          />
        </label>
        <button
          type="button"
          className={primary}
          disabled={state.kind === "running"}
          onClick={() => void start()}
          data-testid="export-start"
        >
          Export
        </button>
        {state.kind === "running" ? (
          <button
            type="button"
            className="rounded-md border border-neutral-300 px-3 py-1.5 text-sm"
            onClick={() => abort.current?.abort()}
          >
            Cancel
          </button>
        ) : null}
      </div>
      <p className="text-xs text-neutral-700">
        At most 366 days per export; maps, policies, members and the audit log are always whole.
      </p>
      <div aria-live="polite" data-testid="export-status" className="text-sm">
        {state.kind === "running" ? (
          state.slow ? (
            <span data-testid="export-progress">Exporting… {sizeText(state.bytes)} so far</span>
          ) : (
            <span>Exporting…</span>
          )
        ) : null}
        {state.kind === "failed" ? (
          <span role="alert" className="text-red-800" data-testid="export-error">
            {state.message}
          </span>
        ) : null}
        {state.kind === "done" ? (
          <div className="space-y-1">
            <p>
              Ready: {sizeText(state.bytes)} in {state.seconds.toFixed(1)} s.{" "}
              <a
                href={state.url}
                download={state.name}
                className="text-sky-800 underline"
                data-testid="export-download"
              >
                Download {state.name}
              </a>
            </p>
            <p className="text-xs">
              sha256 <code data-testid="export-digest">{state.sha256}</code> — recorded by the server as exported (not
              verified by it): link it to a custody map&apos;s Export layer as evidence, and check the file with{" "}
              <code>npx run-custody verify</code>.
            </p>
          </div>
        ) : null}
      </div>
    </section>
  );
}
