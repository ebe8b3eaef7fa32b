/**
 * Events and side effects for the timeline model's unit tests.
 */
import type { SideEffectView, StoredEvent } from "../../../lib/contract/api";

export const T0 = Date.UTC(2025, 2, 4, 12, 0, 0);
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

let seq = 0;
export function ev(partial: Partial<StoredEvent> & Pick<StoredEvent, "type" | "plane">, seconds: number): StoredEvent {
  seq += 1;
  return {
    id: partial.id ?? `evt-${seq}`,
    task_id: "task-1",
    occurred_at: at(seconds),
    received_at: at(seconds + 1),
    environment_id: null,
    attempt: null,
    actor: null,
    attrs: {},
    redaction_count: 0,
    ...partial,
  };
}

export function sideEffect(status: SideEffectView["status"]): SideEffectView {
  return {
    idempotency_key: "k-1",
    status,
    approval: null,
    tool: "records",
    action: "update",
    mutation: true,
    payload_digest: null,
    status_reason: null,
    intent_at: null,
    lease_expires_at: null,
    last_reconcile: null,
    last_not_applied: null,
    repeats: null,
    origin: "intent",
    call_id: null,
    intent_attempt: null,
    unapplied_receipts: [],
    updated_at: at(0),
  };
}
