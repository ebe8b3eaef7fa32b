"use client";

import { useState, type DragEvent } from "react";
import type { VerifyReport } from "@/lib/export/verify";

/**
 * Export the task's evidence bundle, and verify a bundle in the browser (docs/decisions/0037-evidence-bundles.md): the
 * dropped file is read and checked here, with Web Crypto; it is never sent to the server.
 */
export function ExportPanel({ taskId }: { taskId: string }) {
  const [report, setReport] = useState<VerifyReport | null>(null);
  const [fileName, setFileName] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [over, setOver] = useState(false);

  const verify = async (file: File) => {
    setBusy(true);
    setFileName(file.name);
    setReport(null);
    try {
      const { verifyBundle } = await import("@/lib/export/verify");
      setReport(await verifyBundle(file.stream() as ReadableStream<Uint8Array>));
    } finally {
      setBusy(false);
    }
  };
  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault();
    setOver(false);
    const file = e.dataTransfer.files[0];
    if (file) void verify(file);
  };

  return (
    <section aria-labelledby="export-heading" className="rounded-lg border border-neutral-200 bg-white p-3">
      <h2 id="export-heading" className="text-sm font-semibold">
        Export
      </h2>
      <p className="mt-1 text-sm text-neutral-700">
        A signed bundle of everything the server holds on this task (checkpoints, events, side effects, approvals, audit
        entries with their chain). Check it anywhere with <code>npx run-custody verify</code>.
      </p>
      <a
        href={`/api/v1/tasks/${encodeURIComponent(taskId)}/export`}
        download
        className="mt-2 inline-block rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-semibold text-white hover:bg-neutral-700"
        data-testid="export-bundle"
      >
        Download evidence bundle (.tar.gz)
      </a>
      <div
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
        className={`mt-3 rounded-md border-2 border-dashed p-3 text-sm ${over ? "border-sky-600 bg-sky-50" : "border-neutral-300"}`}
      >
        <label htmlFor="verify-bundle" className="font-semibold">
          Verify this bundle
        </label>
        <p className="text-neutral-700">
          Drop a bundle here or choose a file. It is checked in this browser and never uploaded.
        </p>
        <input
          id="verify-bundle"
          type="file"
          accept=".gz,.tgz,application/gzip"
          className="mt-1 text-sm"
          onChange={(e) => {
            const file = e.target.files?.[0];
            if (file) void verify(file);
          }}
        />
      </div>
      <div aria-live="polite" className="mt-2 text-sm">
        {busy ? <p>Verifying {fileName}…</p> : null}
        {report ? (
          <div data-testid="verify-report" data-ok={report.ok ? "true" : "false"}>
            <p className={`font-semibold ${report.ok ? "text-emerald-800" : "text-red-800"}`}>
              {report.ok ? `${fileName} verifies.` : `${fileName} does not verify.`}
            </p>
            <ul className="mt-1 space-y-0.5">
              {report.checks.map((c) => (
                <li key={c.check} className={c.ok ? "text-neutral-800" : "text-red-800"}>
                  <span aria-hidden="true">{c.ok ? "✓" : "✗"}</span> <strong>{c.check}</strong>:{" "}
                  {c.ok
                    ? c.message
                    : `${[c.file, c.record !== undefined ? `record ${c.record}` : null, c.field ? `field ${c.field}` : null].filter(Boolean).join(", ")}${c.file ? ": " : ""}${c.message}`}
                </li>
              ))}
            </ul>
            {report.key_source === "bundle" ? (
              <p className="mt-1 text-neutral-700">
                The keys came from the bundle itself: this shows the bundle is consistent. To show this server signed
                it, verify with the keys from <code>/api/v1/signing-keys</code> (<code>--key</code>).
              </p>
            ) : null}
          </div>
        ) : null}
      </div>
    </section>
  );
}
