"use client";

/**
 * Paste or upload a policy document (YAML or JSON), lint it, and (owners and admins) store it as the next version.
 * Findings show at their field path; a stored version opens on the page with its findings beside its lines.
 */
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { ApiError } from "@/lib/client/api";
import { policyApi, type PolicyFindingJson } from "@/lib/client/policies";
import { FindingList } from "./FindingList";

const primary = "rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-60";
const secondary =
  "rounded-md border border-neutral-400 bg-white px-3 py-1.5 text-sm font-medium text-neutral-900 disabled:opacity-60";

export function PolicyEditor({ canStore, initialText = "" }: { canStore: boolean; initialText?: string }) {
  const router = useRouter();
  const id = useId();
  const [text, setText] = useState(initialText);
  const [busy, setBusy] = useState<"lint" | "store" | null>(null);
  const [result, setResult] = useState<{ valid: boolean; findings: PolicyFindingJson[] } | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function run(kind: "lint" | "store") {
    setBusy(kind);
    setError(null);
    try {
      if (kind === "lint") setResult(await policyApi.lint(text));
      else {
        const stored = await policyApi.store(text);
        router.push(`/policies?v=${stored.version}`);
        router.refresh();
      }
    } catch (err) {
      setResult(null);
      setError(err instanceof ApiError || err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  }

  return (
    <section aria-labelledby={`${id}-h`} className="rounded-lg border border-neutral-200 bg-white p-3">
      <h2 id={`${id}-h`} className="text-sm font-semibold">
        Check a policy document
      </h2>
      <p className="mb-2 text-xs text-neutral-700">
        Paste YAML or JSON, or upload a file. Lint stores nothing.{" "}
        {canStore
          ? "Store keeps it as the next version; a version with an error cannot be activated."
          : "Owners and admins store and activate versions."}
      </p>
      <label htmlFor={`${id}-text`} className="block text-xs font-medium text-neutral-800">
        Policy document
      </label>
      <textarea
        id={`${id}-text`}
        data-testid="policy-text"
        className="h-56 w-full rounded-md border border-neutral-400 p-2 font-mono text-xs"
        value={text}
        spellCheck={false}
        onChange={(e) => {
          setText(e.target.value);
          setResult(null);
        }}
        placeholder={
          "network:\n  access: restricted\n  allowed_domains: [records.example.com]\ncredentials: []\ntools: []"
        }
      />
      <div className="mt-2 flex flex-wrap items-center gap-2">
        <label className={`${secondary} cursor-pointer focus-within:ring-2 focus-within:ring-sky-700`}>
          Upload a file…
          <input
            type="file"
            accept=".yaml,.yml,.json,application/json,application/yaml,text/yaml"
            className="sr-only"
            data-testid="policy-file"
            onChange={async (e) => {
              const file = e.target.files?.[0];
              if (!file) return;
              if (file.size > 256 * 1024) {
                setError("The file is larger than 256 KiB; a policy document is smaller.");
                return;
              }
              setText(await file.text());
              setResult(null);
              setError(null);
            }}
          />
        </label>
        <button
          type="button"
          className={secondary}
          disabled={!text.trim() || busy !== null}
          onClick={() => run("lint")}
        >
          {busy === "lint" ? "Linting…" : "Lint"}
        </button>
        {canStore ? (
          <button
            type="button"
            className={primary}
            disabled={!text.trim() || busy !== null}
            onClick={() => run("store")}
          >
            {busy === "store" ? "Storing…" : "Store as a new version"}
          </button>
        ) : null}
      </div>
      <div aria-live="polite" className="mt-2">
        {error ? (
          <p role="alert" className="text-sm text-red-800">
            {error}
          </p>
        ) : null}
        {result ? (
          result.findings.length === 0 ? (
            <p className="text-sm text-green-800" data-testid="lint-clean">
              No findings: this document can be activated.
            </p>
          ) : (
            <div data-testid="lint-result">
              <p className={`text-sm font-medium ${result.valid ? "text-amber-900" : "text-red-800"}`}>
                {result.valid
                  ? "Warnings only: this document can be activated."
                  : "Errors: fix them before this document can be activated."}
              </p>
              <FindingList findings={result.findings} />
            </div>
          )
        ) : null}
      </div>
    </section>
  );
}

/**
 * Activate a stored, valid version (owners and admins), after a confirmation that names it (the app's one
 * confirmation dialog); a refusal stays in the dialog.
 */
export function ActivateButton({ version, current }: { version: number; current: number | null }) {
  const router = useRouter();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        className={secondary}
        onClick={() => {
          setError(null);
          setConfirming(true);
        }}
        data-testid={`activate-${version}`}
      >
        Activate v{version}
      </button>
      <ConfirmDialog
        open={confirming}
        title={`Make v${version} the current policy${current ? ` in place of v${current}` : ""}?`}
        confirmLabel={`Activate v${version}`}
        tone="primary"
        busy={busy}
        error={error}
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          setBusy(true);
          setError(null);
          try {
            await policyApi.activate(version);
            setConfirming(false);
            router.refresh();
          } catch (err) {
            setError(err instanceof Error ? err.message : String(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <p>Runs are checked against it from now on.</p>
      </ConfirmDialog>
    </>
  );
}
