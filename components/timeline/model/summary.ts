/**
 * A one-line summary of an event's attributes.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/summary.test.ts.
 */

/** Attribute keys worth showing first in one-line summaries, most telling first. */
export const SUMMARY_KEYS: readonly string[] = [
  "name",
  "side_effect",
  "repeats",
  "tool",
  "host",
  "action",
  "action_class",
  "outcome",
  "status",
  "reason",
  "phase",
  "from",
  "to",
  "credential",
  "credential_ref",
  "scope",
  "policy_version",
  "snapshot",
  "digest",
  "idempotency_key",
];

/**
 * A one-line summary of an event's attributes: up to `max` `key=value` pairs of scalar values,
 * preferred keys first (`SUMMARY_KEYS`), then other scalar keys in their order; long strings are cut
 * to 40 characters with an ellipsis. Empty string when there are none.
 */
export function summarizeAttrs(attrs: Readonly<Record<string, unknown>>, max = 3): string {
  const scalar = (v: unknown): v is string | number | boolean =>
    typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  const keys = [
    ...SUMMARY_KEYS.filter((k) => Object.hasOwn(attrs, k)),
    ...Object.keys(attrs).filter((k) => !SUMMARY_KEYS.includes(k)),
  ];
  const out: string[] = [];
  for (const key of keys) {
    if (out.length >= max) break;
    const value = attrs[key];
    if (!scalar(value)) continue;
    const text = String(value);
    out.push(`${key}=${text.length > 40 ? `${text.slice(0, 39)}…` : text}`);
  }
  return out.join(" · ");
}
