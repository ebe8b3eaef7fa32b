"use client";

/**
 * Interruptions, restarts, resumes and stops as rules across all lanes (wide layout), each with a label in the rule
 * band above the lanes. Labels are thinned beforehand (model/rows.ts `thinLabels`): a rule whose label would overlap
 * another is drawn without it (`row` null).
 */
import { AXIS_H, RULE_ROW_H, RULE_STYLE, type Hover } from "./constants";
import type { TimeRule } from "./model";

/** A rule placed in px: its line at `x`, its label at `lx` in band row `row` (null: no label). */
export type PlacedRule = {
  rule: TimeRule;
  x: number;
  lx: number;
  w: number;
  flip: boolean;
  inView: boolean;
  row: number | null;
};

/** The rules, clipped to the plot. */
export function TimelineRules({
  ruleLayout,
  x0,
  x1,
  wide,
  lanesTop,
  lanesBottom,
  clipId,
  onSelect,
  onHover,
}: {
  ruleLayout: readonly PlacedRule[];
  x0: number;
  x1: number;
  wide: boolean;
  lanesTop: number;
  lanesBottom: number;
  clipId: string;
  onSelect: (id: string) => void;
  onHover: (hover: Hover | null) => void;
}) {
  return (
    <g clipPath={`url(#${clipId})`}>
      {ruleLayout.map(({ rule, x: rx, lx, row }) => {
        if (rx < x0 - 1 || rx > x1 + 1) return null;
        const style = RULE_STYLE[rule.kind];
        return (
          <g
            key={rule.eventId}
            data-testid={style.testId}
            data-kind={rule.kind}
            data-event-id={rule.eventId}
            data-label-shown={row === null ? "false" : "true"}
          >
            <line
              x1={rx}
              x2={rx}
              y1={AXIS_H + (row ?? 0) * RULE_ROW_H + 2}
              y2={wide ? lanesBottom : lanesTop}
              className={style.line}
              strokeWidth={style.width}
              strokeDasharray={style.dash}
              pointerEvents="none"
            />
            {row === null ? null : (
              <text
                x={lx}
                y={AXIS_H + row * RULE_ROW_H + 12}
                className={`cursor-pointer text-[10px] font-semibold ${style.text}`}
                data-testid="rule-label"
                onClick={() => onSelect(rule.eventId)}
                onPointerEnter={() => onHover({ kind: "rule", eventId: rule.eventId })}
                onPointerLeave={() => onHover(null)}
              >
                {rule.label}
              </text>
            )}
          </g>
        );
      })}
    </g>
  );
}
