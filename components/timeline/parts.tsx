/**
 * Small presentational pieces shared by the timeline, its event list and its drawer: mark glyphs,
 * outcome and side-effect status labels (always an icon and a word, never colour alone).
 */
import type { ShownWriteStatus } from "@/lib/domain/approvals/write-state";
import { SIDE_EFFECT_STATUS_WORD } from "@/components/ui/status";
import { OUTCOME_WORD, type MarkShape, type Outcome } from "./model";

/** Tailwind classes per outcome: SVG fill/stroke for marks, the attention ring, text colour, a badge look. */
export const OUTCOME_STYLE: Record<Outcome, { mark: string; ring: string; text: string; badge: string }> = {
  ok: {
    mark: "fill-sky-500 stroke-sky-800 dark:fill-sky-400 dark:stroke-sky-200",
    ring: "stroke-sky-700 dark:stroke-sky-300",
    text: "text-neutral-600 dark:text-neutral-300",
    badge:
      "bg-neutral-100 text-neutral-700 ring-neutral-300 dark:bg-neutral-800 dark:text-neutral-200 dark:ring-neutral-600",
  },
  denied: {
    mark: "fill-red-600 stroke-red-900 dark:fill-red-500 dark:stroke-red-200",
    ring: "stroke-red-700 dark:stroke-red-400",
    text: "text-red-700 dark:text-red-400",
    badge: "bg-red-50 text-red-800 ring-red-300 dark:bg-red-950 dark:text-red-200 dark:ring-red-800",
  },
  failed: {
    mark: "fill-red-600 stroke-red-900 dark:fill-red-500 dark:stroke-red-200",
    ring: "stroke-red-700 dark:stroke-red-400",
    text: "text-red-700 dark:text-red-400",
    badge: "bg-red-50 text-red-800 ring-red-300 dark:bg-red-950 dark:text-red-200 dark:ring-red-800",
  },
  unknown: {
    mark: "fill-amber-400 stroke-amber-800 dark:fill-amber-400 dark:stroke-amber-100",
    ring: "stroke-amber-700 dark:stroke-amber-300",
    text: "text-amber-800 dark:text-amber-300",
    badge: "bg-amber-50 text-amber-900 ring-amber-300 dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-700",
  },
};

/** Words for the kinds of mark, used by the legend and tooltips. */
export const SHAPE_WORD: Record<MarkShape, string> = {
  circle: "event",
  diamond: "side effect",
  square: "credential",
  triangle: "egress",
};

/**
 * The SVG elements of one mark shape centred on (0, 0), for use inside an existing `<svg>`.
 * Props: `shape`, `className` (fill/stroke classes), `scale` (1 = 12 px across).
 */
export function ShapePath({ shape, className, scale = 1 }: { shape: MarkShape; className: string; scale?: number }) {
  const s = scale;
  switch (shape) {
    case "diamond":
      return <path d={`M0,${-6 * s} L${6 * s},0 L0,${6 * s} L${-6 * s},0 Z`} className={className} strokeWidth={1} />;
    case "square":
      return (
        <rect x={-4.5 * s} y={-4.5 * s} width={9 * s} height={9 * s} rx={1} className={className} strokeWidth={1} />
      );
    case "triangle":
      return (
        <path
          d={`M0,${-6 * s} L${5.5 * s},${4.5 * s} L${-5.5 * s},${4.5 * s} Z`}
          className={className}
          strokeWidth={1}
        />
      );
    default:
      return <circle r={4.75 * s} className={className} strokeWidth={1} />;
  }
}

/** A standalone 12 px icon of a mark (shape + outcome colour) for HTML contexts. Decorative. */
export function MarkGlyph({ shape, outcome }: { shape: MarkShape; outcome: Outcome }) {
  return (
    <svg width={14} height={14} viewBox="-7 -7 14 14" aria-hidden="true" className="inline-block shrink-0 align-[-2px]">
      <ShapePath shape={shape} className={OUTCOME_STYLE[outcome].mark} />
    </svg>
  );
}

type IconName = "check" | "ban" | "cross" | "question" | "clock" | "lock";

/** A 14 px line icon (decorative; always paired with a word). */
export function StatusIcon({ name, className = "" }: { name: IconName; className?: string }) {
  const common = {
    width: 14,
    height: 14,
    viewBox: "0 0 16 16",
    fill: "none",
    stroke: "currentColor",
    strokeWidth: 1.6,
    strokeLinecap: "round" as const,
    strokeLinejoin: "round" as const,
    "aria-hidden": true,
    className: `inline-block shrink-0 align-[-2px] ${className}`,
  };
  switch (name) {
    case "check":
      return (
        <svg {...common}>
          <circle cx={8} cy={8} r={6.5} />
          <path d="M5 8.2l2 2 4-4.2" />
        </svg>
      );
    case "ban":
      return (
        <svg {...common}>
          <circle cx={8} cy={8} r={6.5} />
          <path d="M3.5 12.5l9-9" />
        </svg>
      );
    case "cross":
      return (
        <svg {...common}>
          <circle cx={8} cy={8} r={6.5} />
          <path d="M5.5 5.5l5 5M10.5 5.5l-5 5" />
        </svg>
      );
    case "question":
      return (
        <svg {...common}>
          <circle cx={8} cy={8} r={6.5} />
          <path d="M6.2 6.3a1.9 1.9 0 1 1 2.6 1.8c-.5.2-.8.6-.8 1.1v.4" />
          <path d="M8 11.6v.1" />
        </svg>
      );
    case "lock":
      return (
        <svg {...common}>
          <rect x={3.5} y={7} width={9} height={6.5} rx={1} />
          <path d="M5.5 7V5.2a2.5 2.5 0 0 1 5 0V7" />
        </svg>
      );
    default:
      return (
        <svg {...common}>
          <circle cx={8} cy={8} r={6.5} />
          <path d="M8 4.5V8l2.2 1.6" />
        </svg>
      );
  }
}

const OUTCOME_ICON: Record<Outcome, IconName> = { ok: "check", denied: "ban", failed: "cross", unknown: "question" };

/** Outcome as icon + word, e.g. "⊘ denied". Props: `outcome`, optional `className`. */
export function OutcomeLabel({ outcome, className = "" }: { outcome: Outcome; className?: string }) {
  return (
    <span className={`inline-flex items-center gap-1 ${OUTCOME_STYLE[outcome].text} ${className}`}>
      <StatusIcon name={OUTCOME_ICON[outcome]} />
      {OUTCOME_WORD[outcome]}
    </span>
  );
}

const SIDE_EFFECT_STATUS_LOOK: Record<ShownWriteStatus, { icon: IconName; className: string }> = {
  not_started: { icon: "clock", className: "text-neutral-600 dark:text-neutral-300" },
  awaiting_approval: { icon: "clock", className: "text-neutral-700 dark:text-neutral-200" },
  approved: { icon: "check", className: "text-neutral-700 dark:text-neutral-200" },
  in_flight: { icon: "clock", className: "text-sky-700 dark:text-sky-300" },
  completed: { icon: "check", className: "text-emerald-700 dark:text-emerald-400" },
  failed: { icon: "cross", className: "text-red-700 dark:text-red-400" },
  unknown: { icon: "question", className: "text-amber-800 dark:text-amber-300" },
  approval_stale: { icon: "question", className: "text-amber-800 dark:text-amber-300" },
  approval_rejected: { icon: "cross", className: "text-red-700 dark:text-red-400" },
  approval_unsealed: { icon: "cross", className: "text-red-700 dark:text-red-400" },
};

/** Side-effect status as icon + word; `unknown` adds "request sent, outcome not recorded". */
export function SideEffectStatusLabel({ status }: { status: ShownWriteStatus }) {
  const look = SIDE_EFFECT_STATUS_LOOK[status];
  return (
    <span className={`inline-flex items-center gap-1 ${look.className}`}>
      <StatusIcon name={look.icon} />
      <span className="font-medium">{SIDE_EFFECT_STATUS_WORD[status]}</span>
      {status === "unknown" ? <span className="font-normal">(request sent, outcome not recorded)</span> : null}
    </span>
  );
}
