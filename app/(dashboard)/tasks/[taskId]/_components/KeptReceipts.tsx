"use client";

import type { UnappliedReceiptView } from "@/lib/contract/api";
import { Id } from "@/components/ui/Id";
import { Time } from "@/components/ui/time";

const REASONS: Record<string, string> = {
  reconcile_required: "arrived after the outcome became unknown",
  lease_expired: "arrived after the lease ran out",
  stale_attempt: "came from an older attempt",
  no_intent: "arrived before any intent",
  receipt_conflict: "differs from the stored receipt",
  late_outcome: "tool outcome that arrived after its attempt ended",
};

/**
 * Receipts (and late tool outcomes) the runtime reported that did not complete or settle the effect, kept as evidence
 * for whoever reconciles it: what was reported (an operation, or the tool's word that nothing was applied), by which
 * path and attempt, and why it was not applied.
 */
export function KeptReceipts({ receipts, compact = false }: { receipts: UnappliedReceiptView[]; compact?: boolean }) {
  const shown = receipts.filter((r) => !r.applied_at);
  if (!shown.length) return null;
  return (
    <div className={compact ? "mt-1" : "rounded-md border border-sky-200 bg-sky-50 p-3"} data-testid="kept-receipts">
      <p className={compact ? "text-neutral-700" : "text-sm font-medium text-sky-950"}>
        {shown.length === 1
          ? "A receipt was reported but not applied"
          : `${shown.length} receipts were reported but not applied`}
        ; kept as evidence:
      </p>
      <ul className={compact ? "list-disc pl-4 text-neutral-700" : "mt-1 list-disc pl-5 text-sm text-sky-950"}>
        {shown.map((r, i) => (
          <li key={`${r.received_at}-${i}`}>
            {r.outcome === "not_applied" ? (
              <>“nothing was applied”: {r.error ?? ""}</>
            ) : r.external_operation_id ? (
              <>
                operation <Id value={r.external_operation_id} inline />
              </>
            ) : (
              "no operation id"
            )}{" "}
            — {REASONS[r.reason] ?? r.reason} (from{" "}
            {r.source === "event" ? `event ${r.event_id ?? ""}` : "the receipt route"}
            {r.attempt ? `, attempt ${r.attempt}` : ""}, received <Time iso={r.received_at} />)
          </li>
        ))}
      </ul>
    </div>
  );
}
