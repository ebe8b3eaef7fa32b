/**
 * Asking a tool owner's lookup endpoint whether a write happened: `GET {url}?idempotency_key=…` with a timeout.
 * The answer is evidence for a person; it never settles an effect by itself, and a timeout or an ambiguous
 * answer settles nothing (docs/concepts.md#reconcile).
 *
 * Expected answer: HTTP 200 with JSON `{"found": true, "external_operation_id": "…", "result_digest"?, "completed_at"?,
 * "applied_count"?}` or `{"found": false}`. Anything else is `ambiguous`. `applied_count` (decision 0050) is how many
 * times the tool owner applied a write under this idempotency key (1 when it honours the key): the product shows it so
 * that "exactly once" is the external system's own count, not an inference. Only those five fields are kept and shown
 * (strings capped, secrets redacted): the lookup is evidence about one write, not a window onto the tool
 * owner's network. Link-local targets (cloud metadata services) are never called.
 */
import { sql } from "drizzle-orm";
import { queryRows } from "@/db";
import { findSideEffect } from "@/db/queries/side-effects";
import { findLiveTask } from "../tasks/deleted";
import { authorize } from "../authz";
import { notFound } from "../errors";
import { checkTaskId } from "../tasks/read";
import { checkEffectName } from "./intent";
import { outboundGet, type Resolver } from "../web/outbound";
import { redactString } from "../events/redact";
import { UNSAFE_TEXT } from "../typed-text";
import { OCCURRED_AT_PATTERN, plausibleTime } from "../events/schema";
import type { VerbContext } from "../context";
import { parseJsonWithin } from "../json/text";

export type LookupAnswer =
  | { configured: false; message: string }
  | {
      configured: true;
      tool: string;
      url: string;
      outcome: "found" | "not_found" | "ambiguous" | "timeout" | "error";
      http_status: number | null;
      answer: unknown;
      external_operation_id: string | null;
      result_digest: string | null;
      completed_at: string | null;
      /** How many times the tool owner says it applied a write under the key; null when it does not say. */
      applied_count: number | null;
      message: string;
      asked_at: string;
    };

/** Largest lookup answer read, in bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** NUL, other control and bidirectional override characters: never stored or shown from a lookup answer. */
const UNSHOWABLE = UNSAFE_TEXT;
const UNSHOWABLE_ALL = new RegExp(UNSAFE_TEXT.source, `${UNSAFE_TEXT.flags}g`);

/** Longest string kept from a lookup answer field. */
const MAX_ANSWER_FIELD = 500;

/**
 * The part of a lookup answer that is kept and shown: `found`, `external_operation_id`, `result_digest` and
 * `completed_at` when present with the expected types, strings capped at 500 characters and redacted; null when the
 * answer is not a JSON object. Pure; exported for tests.
 */
export function keptAnswer(body: unknown): Record<string, unknown> | null {
  if (!body || typeof body !== "object" || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  if (typeof b.found === "boolean") kept.found = b.found;
  for (const field of ["external_operation_id", "result_digest", "completed_at"] as const) {
    const v = b[field];
    if (typeof v === "string")
      kept[field] = redactString(v.slice(0, MAX_ANSWER_FIELD).replace(UNSHOWABLE_ALL, "\ufffd")).value;
  }
  const count = appliedCount(b.applied_count);
  if (count !== null) kept.applied_count = count;
  return kept;
}

/** A lookup's `applied_count` when it is a non-negative safe integer, else null. */
function appliedCount(v: unknown): number | null {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

/** "once", "twice", "3 times": how a count of applications reads in a sentence. */
export function timesWord(n: number): string {
  return n === 1 ? "once" : n === 2 ? "twice" : `${n} times`;
}

/** Options for tests: the resolver the call uses (the system's by default). */
export type LookupOptions = { resolve?: Resolver };

/**
 * Interprets one HTTP answer of a lookup endpoint (pure; exported for tests). A `completed_at` that is not an
 * ISO time between 2000 and one day from now is dropped (a receipt time the clock could not have written).
 */
export function interpretLookup(
  status: number,
  body: unknown,
): Pick<
  Extract<LookupAnswer, { configured: true }>,
  "outcome" | "external_operation_id" | "result_digest" | "completed_at" | "applied_count" | "message"
> {
  const none = { external_operation_id: null, result_digest: null, completed_at: null, applied_count: null };
  if (status !== 200 || !body || typeof body !== "object") {
    return {
      outcome: "ambiguous",
      ...none,
      message: `The lookup answered HTTP ${status} without a usable JSON answer.`,
    };
  }
  const b = body as Record<string, unknown>;
  if (b.found === false) {
    return { outcome: "not_found", ...none, message: "The tool owner has no write under this idempotency key." };
  }
  if (b.found === true && typeof b.external_operation_id === "string" && UNSHOWABLE.test(b.external_operation_id)) {
    return {
      outcome: "ambiguous",
      ...none,
      message:
        "The lookup says found, but its operation id holds control or bidirectional characters; it cannot be recorded. Ask the tool owner.",
    };
  }
  if (
    b.found === true &&
    typeof b.external_operation_id === "string" &&
    redactString(b.external_operation_id).kinds.length
  ) {
    return {
      outcome: "ambiguous",
      ...none,
      message:
        "The lookup says found, but its operation id looks like a credential; it cannot be recorded. Ask the tool owner.",
    };
  }
  if (b.found === true && appliedCount(b.applied_count) === 0) {
    return {
      outcome: "ambiguous",
      ...none,
      message: "The lookup says found, but also that no write was applied under this key; ask the tool owner.",
    };
  }
  if (
    b.found === true &&
    typeof b.external_operation_id === "string" &&
    b.external_operation_id.trim() &&
    b.external_operation_id.length <= MAX_ANSWER_FIELD
  ) {
    return {
      outcome: "found",
      external_operation_id: b.external_operation_id,
      result_digest:
        typeof b.result_digest === "string" && b.result_digest.length <= 200 && !UNSHOWABLE.test(b.result_digest)
          ? b.result_digest
          : null,
      completed_at:
        typeof b.completed_at === "string" && OCCURRED_AT_PATTERN.test(b.completed_at) && plausibleTime(b.completed_at)
          ? b.completed_at
          : null,
      applied_count: appliedCount(b.applied_count),
      message:
        appliedCount(b.applied_count) === null
          ? `The tool owner reports the write was applied (operation ${b.external_operation_id}).`
          : `The tool owner reports the write was applied ${timesWord(appliedCount(b.applied_count)!)} under this idempotency key (operation ${b.external_operation_id}).`,
    };
  }
  return {
    outcome: "ambiguous",
    ...none,
    message: "The lookup answer says neither found with an operation id nor not found.",
  };
}

/**
 * Queries the lookup endpoint registered for the effect's tool.
 * @throws DomainError forbidden (only roles that may reconcile), not_found (task or effect).
 */
export async function lookupSideEffect(
  { db, actor }: VerbContext,
  { taskId, name, ...opts }: { taskId: string; name: string } & LookupOptions,
): Promise<LookupAnswer> {
  authorize(actor, "side_effects.reconcile");
  checkTaskId(taskId);
  checkEffectName(name);
  if (!(await findLiveTask(db, actor.tenantId, taskId))) throw notFound(`Task ${taskId}`);
  const effect = await findSideEffect(db, actor.tenantId, taskId, name);
  if (!effect) throw notFound(`Side effect ${name} of task ${taskId}`);
  const tool = effect.tool ?? name;
  const [cfg] = await queryRows<{ url: string; timeout_ms: number }>(
    db,
    sql`select url, timeout_ms from tool_lookups where tenant_id = ${actor.tenantId} and tool = ${tool}`,
  );
  if (!cfg) {
    return {
      configured: false,
      message: `No lookup endpoint is registered for tool "${tool}". An owner can add one under Settings.`,
    };
  }
  const url = new URL(cfg.url);
  url.searchParams.set("idempotency_key", effect.idempotency_key);
  const askedAt = new Date().toISOString();
  const base = { configured: true as const, tool, url: cfg.url, asked_at: askedAt };
  const none = {
    http_status: null,
    answer: null,
    external_operation_id: null,
    result_digest: null,
    completed_at: null,
    applied_count: null,
  };
  // Resolved once; the connection goes to the address that was checked (no DNS rebinding), redirects not followed.
  const res = await outboundGet(url, {
    timeoutMs: cfg.timeout_ms,
    maxBytes: MAX_ANSWER_BYTES,
    resolve: opts.resolve,
    headers: { accept: "application/json" },
  });
  if (res.kind === "refused") {
    return {
      ...base,
      ...none,
      outcome: "error",
      message: `The lookup URL points at a link-local or cloud metadata address (${res.reason}); it is not called. An owner can register another URL under Settings.`,
    };
  }
  if (res.kind !== "answer") {
    return {
      ...base,
      ...none,
      outcome: res.kind === "timeout" ? "timeout" : "error",
      message:
        res.kind === "timeout"
          ? `The lookup did not answer within ${cfg.timeout_ms} ms; nothing was settled.`
          : "The lookup endpoint could not be reached; nothing was settled.",
    };
  }
  // Not JSON, or nested deeper than an answer needs (not parsed at all): no body.
  const body = res.text === null ? null : (parseJsonWithin(res.text, 32)?.value ?? null);
  return { ...base, http_status: res.status, answer: keptAnswer(body), ...interpretLookup(res.status, body) };
}
