"use client";

import { useEffect, useRef, useState } from "react";
import { apiFetch } from "@/lib/client/api";
import type { Role } from "@/db/schema/enums";
import type { SideEffectView } from "@/lib/contract/api";
import { Id } from "@/components/ui/Id";
import { SideEffectStatusBadge } from "@/components/ui/status";
import { Time } from "@/components/ui/time";
import { STALE_WORD } from "@/components/approvals/ApprovalStatusBadge";
import { shownWriteStatus } from "@/lib/domain/approvals/write-state";
import Link from "next/link";
import { KeptReceipts } from "./KeptReceipts";

/**
 * Side effects with status, idempotency key, receipt and the Reconcile action on unknown ones. A write that waits for
 * approval or was approved shows its live request's state (the gate's reading), with a link to the approval.
 */
export function SideEffectsTab({
  taskId,
  sideEffects,
  focus,
  canReconcile,
  role,
  onReconcile,
}: {
  taskId: string;
  sideEffects: Record<string, SideEffectView>;
  focus: string | null;
  canReconcile: boolean;
  role: Role;
  onReconcile: (name: string) => void;
}) {
  const focusRef = useRef<HTMLTableRowElement | null>(null);
  useEffect(() => {
    focusRef.current?.scrollIntoView({ block: "nearest" });
  }, [focus]);
  const entries = Object.entries(sideEffects);
  if (!entries.length) {
    return (
      <p className="p-4 text-sm text-neutral-600">
        No side effects recorded. They appear when the task record declares them or the runtime registers an intent.
      </p>
    );
  }
  return (
    <div className="relative overflow-x-auto">
      <table className="w-full min-w-[44rem] text-left text-sm">
        <thead className="text-xs uppercase tracking-wide text-neutral-600">
          <tr>
            <th scope="col" className="px-2 py-1.5">
              Effect
            </th>
            <th scope="col" className="px-2 py-1.5">
              Status
            </th>
            <th scope="col" className="px-2 py-1.5">
              Idempotency key
            </th>
            <th scope="col" className="px-2 py-1.5">
              Receipt / reason
            </th>
            <th scope="col" className="px-2 py-1.5">
              Updated
            </th>
            <th scope="col" className="px-2 py-1.5">
              <span className="sr-only">Action</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([name, e]) => (
            <tr
              key={name}
              ref={focus === name ? focusRef : undefined}
              className={`border-t border-neutral-100 align-top ${focus === name ? "bg-amber-50/60" : ""}`}
              data-testid="side-effect-row"
              data-name={name}
              data-status={e.status}
              data-shown-status={shownWriteStatus(e.status, e.approval)}
            >
              <td className="px-2 py-2">
                <div className="font-medium">{name}</div>
                <div className="text-xs text-neutral-600">
                  {e.action ?? e.tool ?? ""}
                  {e.mutation ? " · mutation" : " · read"}
                  {e.intent_attempt ? ` · attempt ${e.intent_attempt}` : ""}
                </div>
                {e.repeats ? (
                  <div className="text-xs text-neutral-700" data-testid="effect-repeats">
                    Deliberately repeats <code className="font-mono">{e.repeats}</code> (same action and payload)
                  </div>
                ) : null}
                {e.origin === "tool_call" ? (
                  <div className="text-xs text-neutral-700" data-testid="tool-call-effect">
                    Tool call <Id value={e.call_id ?? ""} inline /> · no idempotency key was given
                  </div>
                ) : null}
              </td>
              <td className="px-2 py-2">
                <SideEffectStatusBadge status={shownWriteStatus(e.status, e.approval)} />
                {e.approval && (e.status === "awaiting_approval" || e.status === "approved") ? (
                  <div className="mt-1 text-xs text-neutral-700" data-testid="effect-approval">
                    <Link href={`/approvals/${encodeURIComponent(e.approval.id)}`} className="text-sky-800 underline">
                      Approval
                    </Link>
                    {e.approval.state === "stale"
                      ? `: ${e.approval.stale_reasons.map((r) => STALE_WORD[r]).join(", ")}`
                      : e.approval.state === "rejected"
                        ? `: rejected${e.approval.decided_by ? ` by ${e.approval.decided_by}` : ""}${e.approval.reason ? ` (“${e.approval.reason}”)` : ""}`
                        : null}
                  </div>
                ) : null}
              </td>
              <td className="px-2 py-2 text-xs">
                <Id value={e.idempotency_key} className="max-w-[18rem]" data-testid="idempotency-key" />
              </td>
              <td className="px-2 py-2 text-xs text-neutral-700">
                {e.receipt ? (
                  <div>
                    operation <Id value={e.receipt.external_operation_id} inline />
                    <div className="text-neutral-500">
                      completed <Time iso={e.receipt.completed_at} />
                    </div>
                  </div>
                ) : null}
                {e.status_reason && !(e.last_reconcile && e.status !== "unknown") ? <div>{e.status_reason}</div> : null}
                {e.status === "unknown" ? <KeptReceipts receipts={e.unapplied_receipts} compact /> : null}
                {e.receipt?.warnings?.includes("completed_before_intent") ? (
                  <div className="mt-1 text-amber-900">
                    ⚠ The receipt claims a time before its intent was registered: check the runtime&apos;s clock.
                  </div>
                ) : null}
                {e.last_not_applied ? (
                  <div className="mt-1 text-neutral-600" data-testid="last-not-applied">
                    Not applied, reported by {e.last_not_applied.by} (<Time iso={e.last_not_applied.at} />
                    ): “{e.last_not_applied.error}”
                  </div>
                ) : null}
                {e.last_reconcile ? (
                  <div className="mt-1 text-neutral-600" data-testid="last-reconcile">
                    Reconciled by {e.last_reconcile.by} (<Time iso={e.last_reconcile.at} />
                    ): {e.last_reconcile.outcome.replace("_", " ")} — “{e.last_reconcile.evidence}”
                  </div>
                ) : null}
              </td>
              <td className="px-2 py-2 text-xs text-neutral-600">
                <Time iso={e.updated_at} />
              </td>
              <td className="px-2 py-2 text-right">
                {e.status === "unknown" ? (
                  canReconcile ? (
                    <button
                      type="button"
                      onClick={() => onReconcile(name)}
                      className="rounded-md bg-amber-700 px-2.5 py-1 text-xs font-semibold text-white hover:bg-amber-800"
                    >
                      Reconcile
                    </button>
                  ) : (
                    <span className="text-xs text-neutral-500" title={`Your role (${role}) cannot reconcile`}>
                      A responder must reconcile
                    </span>
                  )
                ) : e.status === "completed" && e.mutation && canReconcile ? (
                  <AskToolOwner taskId={taskId} name={name} />
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The part of a lookup answer this tab shows. */
type ToolOwnerAnswer =
  | { configured: false; message: string }
  | { configured: true; outcome: string; applied_count?: number | null; message: string; asked_at: string };

/**
 * "Ask the tool owner" on a completed write: asks the tool's lookup endpoint about its idempotency key (evidence only,
 * it settles nothing) and shows the answer — with the external system's own count of writes applied under the key,
 * when it gives one (decision 0050) — and when it was asked.
 */
function AskToolOwner({ taskId, name }: { taskId: string; name: string }) {
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<ToolOwnerAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <div className="text-left text-xs">
      <button
        type="button"
        className="rounded-md border border-neutral-400 bg-white px-2 py-1 font-medium whitespace-nowrap disabled:opacity-60"
        disabled={busy}
        aria-label={`Ask the tool owner about ${name}`}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            setAnswer(
              await apiFetch<ToolOwnerAnswer>(
                `/api/v1/tasks/${encodeURIComponent(taskId)}/side-effects/${encodeURIComponent(name)}/lookup`,
                { method: "POST", body: {} },
              ),
            );
          } catch (err) {
            setError(`Could not ask: ${err instanceof Error ? err.message : String(err)}. Try again.`);
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy ? "Asking…" : "Ask the tool owner"}
      </button>
      <div aria-live="polite" className="mt-1 max-w-[16rem]">
        {error ? <p className="text-red-700">{error}</p> : null}
        {answer ? (
          <p
            data-testid="effect-lookup-answer"
            data-outcome={answer.configured ? answer.outcome : "not_configured"}
            data-applied-count={answer.configured ? (answer.applied_count ?? "") : ""}
          >
            {answer.message}
            {answer.configured ? (
              <>
                {" "}
                (asked <Time iso={answer.asked_at} />)
              </>
            ) : null}
          </p>
        ) : null}
      </div>
    </div>
  );
}
