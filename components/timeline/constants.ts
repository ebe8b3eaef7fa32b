/**
 * Geometry, styles and shared types of the four-lane timeline (Timeline.tsx and its parts).
 */
import type { BinnableMark, Domain, MarkShape, Outcome, RuleKind, TimeWarp } from "./model";

export const AXIS_H = 26;
export const RULE_ROW_H = 14;
export const MAX_RULE_ROWS = 3;
export const LANE_H = 36;
export const ENV_MARK_ROW = 26;
export const TOOLS_MARK_ROW = 26;
export const MAX_CALL_ROWS = 3;
export const BAR_H = 14;
export const BAR_GAP = 4;
export const CAPTION_H = 18;
export const WIDE_MIN = 640;
export const LABEL_W = 128;
export const PAD_R = 14;
export const BIN_PX = 24;
export const MAX_PER_BUCKET = 3;
export const MIN_SPAN_MS = 5;
export const FALLBACK_WIDTH = 960;

export type MarkItem = BinnableMark & { shape: MarkShape; type: string };

export type Hover =
  | { kind: "event"; id: string }
  | { kind: "bin"; key: string }
  | { kind: "bar"; environmentId: string }
  | { kind: "rule"; eventId: string }
  | { kind: "call"; calledEventId: string }
  | { kind: "gap"; start: number }
  | { kind: "constraints"; eventId: string };

export type Drag = { pointerId: number; startX: number; startDomain: Domain; mode: "pan" | "brush"; moved: boolean };

export const RULE_STYLE: Record<
  RuleKind,
  { line: string; text: string; dash?: string; width: number; testId: string }
> = {
  interruption: {
    line: "stroke-red-500 dark:stroke-red-400",
    text: "fill-red-700 dark:fill-red-300",
    dash: "4 3",
    width: 1.5,
    testId: "interruption-rule",
  },
  stop: {
    line: "stroke-red-700 dark:stroke-red-400",
    text: "fill-red-800 dark:fill-red-300",
    width: 2,
    testId: "stop-rule",
  },
  finish: {
    line: "stroke-neutral-500 dark:stroke-neutral-400",
    text: "fill-neutral-700 dark:fill-neutral-300",
    width: 1.5,
    testId: "finish-rule",
  },
  restart: {
    line: "stroke-emerald-600 dark:stroke-emerald-400",
    text: "fill-emerald-800 dark:fill-emerald-300",
    dash: "2 2",
    width: 1.5,
    testId: "restart-rule",
  },
  resume: {
    line: "stroke-emerald-600 dark:stroke-emerald-400",
    text: "fill-emerald-800 dark:fill-emerald-300",
    width: 1.5,
    testId: "restart-rule",
  },
};

/** Which rule labels stay when they crowd (higher first). */
export const RULE_PRIORITY: Record<RuleKind, number> = { interruption: 3, stop: 3, finish: 2, restart: 1, resume: 1 };

export const RULE_WORD: Record<RuleKind, string> = {
  interruption: "Interruption",
  stop: "Run stopped",
  finish: "Run finished",
  restart: "Restart in a new sandbox",
  resume: "Run resumed",
};

export const BIN_STYLE: Record<Outcome, { rect: string; text: string }> = {
  ok: { rect: "fill-neutral-700 dark:fill-neutral-300", text: "fill-white dark:fill-neutral-900" },
  unknown: { rect: "fill-amber-400 stroke-amber-800", text: "fill-amber-950" },
  denied: { rect: "fill-red-600", text: "fill-white" },
  failed: { rect: "fill-red-600", text: "fill-white" },
};

/** A real-time window in virtual time. */
export function toVirtualDomain(warp: TimeWarp, d: Domain): Domain {
  return [warp.toVirtual(d[0]), warp.toVirtual(d[1])];
}

/** A virtual-time window in real time. */
export function toRealDomain(warp: TimeWarp, d: Domain): Domain {
  return [warp.toReal(d[0]), warp.toReal(d[1])];
}
