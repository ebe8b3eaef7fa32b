/**
 * The shape and outcome of an event's mark, and the side effect an event is about.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/outcome.test.ts.
 */
import type { SideEffectView, StoredEvent } from "@/lib/contract/api";

/** Shape of a mark, by kind of event. */
export type MarkShape = "circle" | "diamond" | "square" | "triangle";

/** `diamond` for side_effect.*, `square` for credential.*, `triangle` for egress.*, else `circle`. */
export function markShape(type: string): MarkShape {
  if (type.startsWith("side_effect.")) return "diamond";
  if (type.startsWith("credential.")) return "square";
  if (type.startsWith("egress.")) return "triangle";
  return "circle";
}

/** Outcome an event's mark is coloured by. */
export type Outcome = "ok" | "denied" | "failed" | "unknown";

/** Outcomes from most to least alarming (a bin takes the first one any member has). */
export const OUTCOME_SEVERITY: readonly Outcome[] = ["failed", "denied", "unknown", "ok"];

/** The word for an outcome (colour never carries meaning alone). */
export const OUTCOME_WORD: Record<Outcome, string> = {
  ok: "ok",
  denied: "denied",
  failed: "failed",
  unknown: "unknown",
};

/** Name of the side effect a side_effect.* event refers to (`attrs.name`, else `attrs.side_effect`), or null. */
export function sideEffectNameOf(event: Pick<StoredEvent, "type" | "attrs">): string | null {
  if (!event.type.startsWith("side_effect.")) return null;
  const { name, side_effect: sideEffect } = event.attrs;
  if (typeof name === "string" && name !== "") return name;
  if (typeof sideEffect === "string" && sideEffect !== "") return sideEffect;
  return null;
}

/**
 * Outcome of one event:
 * - `denied` for egress.denied and credential.denied;
 * - `failed` for tool.failed;
 * - `unknown` for a side_effect.intent whose side effect currently has status `unknown`;
 * - `ok` otherwise.
 */
export function classifyOutcome(
  event: Pick<StoredEvent, "type" | "attrs">,
  sideEffects?: Readonly<Record<string, Pick<SideEffectView, "status">>>,
): Outcome {
  switch (event.type) {
    case "egress.denied":
    case "credential.denied":
      return "denied";
    case "tool.failed":
      return "failed";
    case "side_effect.intent": {
      const name = sideEffectNameOf(event);
      if (name !== null && sideEffects && Object.hasOwn(sideEffects, name) && sideEffects[name]?.status === "unknown") {
        return "unknown";
      }
      return "ok";
    }
    default:
      return "ok";
  }
}

/**
 * Name of the side effect an event is about, if that name is a key of `sideEffects`: side_effect.*
 * events by `attrs.name` / `attrs.side_effect`, approval.* events by `attrs.side_effect`. Else null.
 */
export function relatedSideEffectName(
  event: Pick<StoredEvent, "type" | "attrs">,
  sideEffects: Readonly<Record<string, unknown>> | undefined,
): string | null {
  if (!sideEffects) return null;
  let name = sideEffectNameOf(event);
  if (name === null && event.type.startsWith("approval.") && typeof event.attrs.side_effect === "string") {
    name = event.attrs.side_effect;
  }
  return name !== null && Object.hasOwn(sideEffects, name) ? name : null;
}
