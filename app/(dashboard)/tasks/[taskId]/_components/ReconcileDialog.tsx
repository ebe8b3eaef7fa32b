"use client";

/**
 * Reconcile an `unknown` side effect: ask the tool owner's lookup (evidence only), then record that the write
 * completed (with the external operation id) or was not applied — with evidence. The server decides races;
 * a conflict shows who settled it first.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { SideEffectView } from "@/lib/contract/api";
import { KeptReceipts } from "./KeptReceipts";
import { Id } from "@/components/ui/Id";
import { SideEffectStatusBadge } from "@/components/ui/status";
import { Time } from "@/components/ui/time";

type LookupAnswer =
  | { configured: false; message: string }
  | {
      configured: true;
      url: string;
      outcome: "found" | "not_found" | "ambiguous" | "timeout" | "error";
      external_operation_id: string | null;
      /** How many times the tool owner applied a write under the key (decision 0050); null when it does not say. */
      applied_count?: number | null;
      http_status: number | null;
      message: string;
      asked_at: string;
    };

type ReconcileResult = {
  name: string;
  status: string;
  audit_seq: number;
  /** The decision as stored; `lookup` is the answer kept with it, when the lookup was asked on submit. */
  reconcile?: { lookup?: LookupAnswer };
};

type ConfiguredLookup = Extract<LookupAnswer, { configured: true }>;

/**
 * The evidence the dialog proposes from a lookup answer the person saw. When the server asks the lookup again on
 * submit (`reasked`: the box is ticked, or the write is recorded as not applied, which always asks), the answer
 * kept with the decision is that later one: the text then says so rather than quoting the earlier answer as if it
 * were the stored one. Null when the answer proves nothing either way.
 */
export function lookupEvidence(a: ConfiguredLookup, idempotencyKey: string, reasked: boolean): string | null {
  const said =
    a.outcome === "found"
      ? `write found, operation ${a.external_operation_id}${
          typeof a.applied_count === "number"
            ? `, applied ${a.applied_count === 1 ? "once" : `${a.applied_count} times`} under this key`
            : ""
        }`
      : a.outcome === "not_found"
        ? `no write under key ${idempotencyKey}`
        : null;
  if (said === null) return null;
  return reasked
    ? `Lookup ${a.url} asked again when recording; its answer is kept with this decision. Earlier, at ${a.asked_at}, it answered: ${said}.`
    : `Lookup ${a.url} answered at ${a.asked_at}: ${said}.`;
}

const enc = encodeURIComponent;

/** A webhook source's report about the effect (decision 0040); the newest pre-fills the dialog. */
type WebhookReport = {
  source: string;
  webhook_id: string;
  received_at: string;
  outcome: "applied" | "not_applied";
  external_operation_id: string | null;
};

/** Modal dialog for one effect. */
export function ReconcileDialog({
  taskId,
  name,
  effect,
  onClose,
}: {
  taskId: string;
  name: string;
  effect: SideEffectView;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const qc = useQueryClient();
  const [outcome, setOutcome] = useState<"completed" | "not_applied" | null>(null);
  const [operationId, setOperationId] = useState("");
  const [evidence, setEvidence] = useState("");
  // Unticked by default: the answer the person saw (and the evidence quotes) is the one that counts; asking again
  // on submit is a deliberate choice, and then the evidence says that the later answer is the one kept.
  const [useLookup, setUseLookup] = useState(false);
  const [lookup, setLookup] = useState<LookupAnswer | null>(null);
  const lookupAnswer = useRef<HTMLParagraphElement>(null);
  // The answer is what the person asked for: once it is on screen, keyboard focus moves to it rather than to the page.
  useEffect(() => {
    if (lookup) lookupAnswer.current?.focus();
  }, [lookup]);
  // The evidence text the dialog proposed last; while the person has not edited it, it follows the choices.
  const [proposed, setProposed] = useState<string | null>(null);

  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);

  const refresh = () => qc.invalidateQueries({ queryKey: ["task", taskId] });

  // What a webhook source reported about this write pre-fills the choices, as a lookup answer does; the person decides.
  const reports = useQuery({
    queryKey: ["task", taskId, "webhook-reports", name],
    queryFn: async () =>
      (
        await apiFetch<{ reports: WebhookReport[] }>(
          `/api/v1/tasks/${enc(taskId)}/side-effects/${enc(name)}/webhook-reports`,
        )
      ).reports,
  });
  // What the write sent (decision 0045): the person compares it with what the external system holds.
  const payload = useQuery({
    queryKey: ["task", taskId, "payload", name, effect.payload_digest ?? null],
    queryFn: () =>
      apiFetch<{ payload_digest: string | null; source: string | null; text: string | null; truncated: boolean }>(
        `/api/v1/tasks/${enc(taskId)}/side-effects/${enc(name)}/payload`,
      ),
    staleTime: 60_000,
  });
  const report = reports.data?.[0] ?? null;
  // Adjusted while rendering (not in an effect): once, when the first report arrives.
  const [prefilled, setPrefilled] = useState(false);
  if (report && !prefilled) {
    setPrefilled(true);
    setOutcome(report.outcome === "applied" ? "completed" : "not_applied");
    if (report.external_operation_id) setOperationId(report.external_operation_id);
    const text = `Webhook source ${report.source} reported ${report.outcome.replace("_", " ")} at ${report.received_at} (webhook-id ${report.webhook_id}${report.external_operation_id ? `, operation ${report.external_operation_id}` : ""}).`;
    setEvidence(text);
    setProposed(text);
  }

  const lookupM = useMutation({
    mutationFn: () =>
      apiFetch<LookupAnswer>(`/api/v1/tasks/${enc(taskId)}/side-effects/${enc(name)}/lookup`, {
        method: "POST",
        body: {},
      }),
    onSuccess: (a) => {
      setLookup(a);
      if (!a.configured) return;
      const next = a.outcome === "found" ? "completed" : a.outcome === "not_found" ? "not_applied" : null;
      if (next === null) return;
      setOutcome(next);
      if (next === "completed") setOperationId(a.external_operation_id ?? "");
      propose(a, useLookup || next === "not_applied");
    },
  });

  /** Sets the proposed evidence from a lookup answer unless the person has written their own. */
  const propose = (a: ConfiguredLookup, reasked: boolean) => {
    const text = lookupEvidence(a, effect.idempotency_key, reasked);
    if (text === null || (evidence.trim() !== "" && evidence !== proposed)) return;
    setEvidence(text);
    setProposed(text);
  };
  /** The server asks a configured lookup again on submit when the box is ticked or the outcome is "not applied". */
  const reaskedWith = (o: typeof outcome, ticked: boolean) => ticked || o === "not_applied";
  const chooseOutcome = (o: "completed" | "not_applied") => {
    setOutcome(o);
    if (lookup?.configured) propose(lookup, reaskedWith(o, useLookup));
  };
  const chooseUseLookup = (ticked: boolean) => {
    setUseLookup(ticked);
    if (lookup?.configured) propose(lookup, reaskedWith(outcome, ticked));
  };

  const submit = useMutation({
    mutationFn: () =>
      apiFetch<ReconcileResult>(`/api/v1/tasks/${enc(taskId)}/side-effects/${enc(name)}/reconcile`, {
        method: "POST",
        body: {
          outcome,
          evidence,
          ...(outcome === "completed" && operationId.trim() ? { external_operation_id: operationId.trim() } : {}),
          ...(useLookup && outcome === "completed" ? { use_lookup: true } : {}),
        },
      }),
    onSuccess: refresh,
    onError: (err) => {
      if (err instanceof ApiError && err.status === 409) void refresh();
    },
  });

  const fieldErrors =
    submit.error instanceof ApiError && submit.error.status === 422
      ? ((submit.error.details as { fields?: Array<{ path: string; message: string }> } | undefined)?.fields ?? [])
      : [];
  const errorFor = (path: string) => fieldErrors.find((f) => f.path === path)?.message;
  const conflicted = submit.error instanceof ApiError && submit.error.status === 409;
  const missing = missingForReconcile({ outcome, evidence, operationId, useLookup });
  const submitLabel =
    outcome === null ? `Record ${name}` : `Record ${name} as ${outcome === "completed" ? "completed" : "not applied"}`;

  return (
    <dialog
      ref={ref}
      onClose={onClose}
      aria-labelledby="reconcile-title"
      className="m-auto w-[min(40rem,calc(100vw-2rem))] rounded-lg border border-neutral-300 p-0 shadow-xl backdrop:bg-black/30"
      data-testid="reconcile-dialog"
    >
      <div className="space-y-4 p-5">
        <div className="flex items-start justify-between gap-3">
          <div className="min-w-0">
            <h2 id="reconcile-title" className="text-base font-semibold">
              Reconcile {name}
            </h2>
            <p className="text-sm text-neutral-600">
              Task <Id value={taskId} inline /> · key <Id value={effect.idempotency_key} inline />
            </p>
          </div>
          <SideEffectStatusBadge status={effect.status} />
        </div>

        {submit.isSuccess ? (
          <div className="space-y-3" role="status">
            <p className="rounded-md border border-emerald-200 bg-emerald-50 p-3 text-sm text-emerald-900">
              Recorded: {name} is now <strong>{submit.data.status.replace("_", " ")}</strong>. Audit entry #
              {submit.data.audit_seq} was written. The resume gate re-evaluates on its next check.
            </p>
            {submit.data.reconcile?.lookup?.configured ? (
              <p className="text-sm text-neutral-700" data-testid="stored-lookup">
                Kept with the decision: the lookup&apos;s answer at {submit.data.reconcile.lookup.asked_at}:{" "}
                {submit.data.reconcile.lookup.message}
              </p>
            ) : null}
            <div className="flex justify-end">
              <button
                type="button"
                autoFocus
                className="rounded-md bg-neutral-900 px-3 py-1.5 text-sm text-white"
                onClick={() => ref.current?.close()}
              >
                Done
              </button>
            </div>
          </div>
        ) : (
          <form
            className="space-y-4"
            onSubmit={(e) => {
              e.preventDefault();
              submit.mutate();
            }}
          >
            <p className="text-sm text-neutral-700">
              The request may have reached the external system, but no receipt was recorded
              {effect.intent_at ? (
                <>
                  {" "}
                  (intent at <Time iso={effect.intent_at} />)
                </>
              ) : null}
              . Find out what happened before the run is allowed to continue.
            </p>

            <section aria-labelledby="reconcile-payload-h" data-testid="reconcile-payload">
              <h3 id="reconcile-payload-h" className="text-sm font-semibold">
                Request payload
              </h3>
              {payload.isPending ? (
                <p className="text-sm text-neutral-600">Loading the payload…</p>
              ) : payload.error ? (
                <p role="alert" className="text-sm text-red-700">
                  Could not load the payload: {payload.error.message}
                </p>
              ) : payload.data.text === null ? (
                <p className="text-sm text-neutral-600">
                  The runtime sent only the digest
                  {payload.data.payload_digest ? (
                    <>
                      {" "}
                      <Id value={payload.data.payload_digest} inline className="text-xs" />
                    </>
                  ) : null}
                  , not the payload: ask the external system by the idempotency key.
                </p>
              ) : (
                <>
                  <pre
                    className="mt-1 max-h-48 overflow-auto rounded border border-neutral-200 bg-neutral-50 p-2 font-mono text-xs whitespace-pre-wrap break-words"
                    tabIndex={0}
                    aria-label="Request payload JSON"
                  >
                    {payload.data.text}
                  </pre>
                  <p className="mt-1 text-xs text-neutral-600">
                    {payload.data.source === "approval" ? "As its approval request holds it" : "As its intent sent it"}
                    {payload.data.truncated ? " (the beginning only)" : ""}; values that look like credentials show as
                    [REDACTED].
                  </p>
                </>
              )}
            </section>

            <KeptReceipts receipts={effect.unapplied_receipts} />

            {report ? (
              <p
                role="note"
                className="rounded-md border border-sky-200 bg-sky-50 p-2 text-sm"
                data-testid="webhook-report"
              >
                Webhook source <strong>{report.source}</strong> reported this write{" "}
                {report.outcome === "applied" ? "applied" : "not applied"}
                {report.external_operation_id ? <> (operation {report.external_operation_id})</> : null} at{" "}
                <Time iso={report.received_at} />; the choices below are pre-filled from it.
              </p>
            ) : null}

            <div className="rounded-md border border-neutral-200 p-3">
              <div className="flex flex-wrap items-center justify-between gap-2">
                <span className="text-sm font-medium">Ask the tool owner</span>
                <button
                  type="button"
                  className="rounded-md border border-neutral-300 px-2.5 py-1 text-sm hover:bg-neutral-50 aria-disabled:opacity-50"
                  onClick={() => {
                    if (!lookupM.isPending) lookupM.mutate();
                  }}
                  aria-disabled={lookupM.isPending}
                >
                  {lookupM.isPending ? "Asking…" : "Look up by idempotency key"}
                </button>
              </div>
              {lookupM.error ? <p className="mt-2 text-sm text-red-700">{lookupM.error.message}</p> : null}
              {lookup ? (
                <p
                  ref={lookupAnswer}
                  tabIndex={-1}
                  className="mt-2 text-sm focus:outline-2 focus:outline-offset-2 focus:outline-amber-700"
                  data-testid="lookup-answer"
                  data-outcome={lookup.configured ? lookup.outcome : "not_configured"}
                >
                  {lookup.message}
                  {lookup.configured && lookup.outcome !== "found" && lookup.outcome !== "not_found"
                    ? " Decide from other evidence."
                    : ""}
                </p>
              ) : null}
            </div>

            <fieldset className="space-y-2">
              <legend className="text-sm font-medium">What happened?</legend>
              <label className="flex items-start gap-2 text-sm">
                <input
                  type="radio"
                  name="outcome"
                  value="completed"
                  checked={outcome === "completed"}
                  onChange={() => chooseOutcome("completed")}
                  className="mt-1"
                />
                <span>
                  <strong>It completed.</strong> The external system has the write; record its receipt. The runtime will
                  replay the receipt instead of writing again.
                </span>
              </label>
              <label className="flex items-start gap-2 text-sm">
                <input
                  type="radio"
                  name="outcome"
                  value="not_applied"
                  checked={outcome === "not_applied"}
                  onChange={() => chooseOutcome("not_applied")}
                  className="mt-1"
                />
                <span>
                  <strong>It was not applied.</strong> The runtime may retry with the same idempotency key.
                </span>
              </label>
              {errorFor("outcome") ? <p className="text-sm text-red-700">{errorFor("outcome")}</p> : null}
            </fieldset>

            {outcome === "completed" ? (
              <div>
                <label htmlFor="operation-id" className="block text-sm font-medium">
                  External operation id
                </label>
                <input
                  id="operation-id"
                  value={operationId}
                  onChange={(e) => setOperationId(e.target.value)}
                  className="mt-1 w-full rounded-md border border-neutral-300 px-2 py-1.5 font-mono text-sm"
                  placeholder="the receipt found in the external system"
                  aria-invalid={Boolean(errorFor("external_operation_id"))}
                />
                {errorFor("external_operation_id") ? (
                  <p className="text-sm text-red-700">{errorFor("external_operation_id")}</p>
                ) : null}
              </div>
            ) : null}

            <div>
              <label htmlFor="evidence" className="block text-sm font-medium">
                Evidence
              </label>
              <textarea
                id="evidence"
                value={evidence}
                onChange={(e) => setEvidence(e.target.value)}
                rows={3}
                className="mt-1 w-full rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
                placeholder="How do you know? A lookup answer, a ticket, a log line."
                aria-invalid={Boolean(errorFor("evidence"))}
              />
              {errorFor("evidence") ? <p className="text-sm text-red-700">{errorFor("evidence")}</p> : null}
              {lookup?.configured && outcome === "not_applied" ? (
                <p className="mt-1 text-xs text-neutral-700" data-testid="lookup-reask-note">
                  Recording a write as not applied always asks the lookup again, and keeps that answer with the
                  decision.
                </p>
              ) : lookup?.configured ? (
                <label className="mt-1 flex items-center gap-2 text-xs text-neutral-700">
                  <input type="checkbox" checked={useLookup} onChange={(e) => chooseUseLookup(e.target.checked)} />
                  Ask the lookup again when recording and keep its answer with the decision
                </label>
              ) : null}
            </div>

            {submit.error && !(submit.error instanceof ApiError && submit.error.status === 422) ? (
              <p
                role="alert"
                className="rounded-md border border-red-200 bg-red-50 p-3 text-sm text-red-800"
                data-testid="reconcile-error"
              >
                {submit.error.message}
              </p>
            ) : fieldErrors.length &&
              !fieldErrors.some((f) => ["outcome", "evidence", "external_operation_id"].includes(f.path)) ? (
              <p role="alert" className="text-sm text-red-700">
                {submit.error?.message}
              </p>
            ) : null}

            <div className="flex flex-wrap items-center justify-end gap-2">
              {!conflicted && missing.length ? (
                <p
                  id="reconcile-missing"
                  className="mr-auto text-sm text-neutral-600"
                  data-testid="reconcile-missing"
                  aria-live="polite"
                >
                  {capitalized(sentence(missing))} to record it.
                </p>
              ) : null}
              <button
                type="button"
                className="rounded-md border border-neutral-300 px-3 py-1.5 text-sm"
                onClick={() => ref.current?.close()}
              >
                {conflicted ? "Close" : "Cancel"}
              </button>
              {conflicted ? null : (
                <button
                  type="submit"
                  disabled={missing.length > 0 || submit.isPending}
                  aria-describedby={missing.length ? "reconcile-missing" : undefined}
                  className="rounded-md bg-amber-700 px-3 py-1.5 text-sm font-semibold text-white hover:bg-amber-800 disabled:cursor-not-allowed disabled:opacity-50"
                >
                  {submit.isPending ? "Recording…" : submitLabel}
                </button>
              )}
            </div>
          </form>
        )}
      </div>
    </dialog>
  );
}

/**
 * What the form still lacks before the server would accept it (the same rules as the reconcile verb): an outcome,
 * evidence of at least 3 characters, and for "completed" the external operation id unless the lookup is asked
 * again when recording.
 */
function missingForReconcile(f: {
  outcome: "completed" | "not_applied" | null;
  evidence: string;
  operationId: string;
  useLookup: boolean;
}): string[] {
  const missing: string[] = [];
  if (f.outcome === null) missing.push("choose an outcome");
  if (f.outcome === "completed" && !f.operationId.trim() && !f.useLookup)
    missing.push("enter the external operation id");
  if (f.evidence.trim().length < 3) missing.push("write the evidence");
  return missing;
}

/** The text with its first letter in upper case. */
function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "a", "a and b", "a, b and c". */
function sentence(parts: string[]): string {
  return parts.length <= 1 ? (parts[0] ?? "") : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}
