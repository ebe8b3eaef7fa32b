/**
 * Event bodies as pages carry them (decision 0034): a page never ships event bodies in bulk. An event whose `attrs`
 * serialize to more than {@link SUMMARY_ATTRS_CHARS} characters travels with a summary — its top-level scalar values,
 * strings cut to {@link SUMMARY_STRING_CHARS} — and `attrs_truncated: true`; the drawer fetches the event's detail on
 * demand (`GET /api/v1/tasks/{id}/events/{event_id}`), itself capped at {@link DETAIL_ATTRS_CHARS} characters with
 * strings cut to {@link DETAIL_STRING_CHARS}. Small events (nearly all) travel unchanged. Pure: the server shapes,
 * the browser reads the marker.
 */
import type { StoredEvent } from "@/lib/contract/api";

/** Largest serialized `attrs` a page ships whole with an event. */
export const SUMMARY_ATTRS_CHARS = 1024;
/** Longest string value of a summary. */
export const SUMMARY_STRING_CHARS = 200;
/** Largest serialized `attrs` of one event's detail. */
export const DETAIL_ATTRS_CHARS = 16_384;
/** Longest string value of a detail. */
export const DETAIL_STRING_CHARS = 4096;

type Cap = { left: number; cut: boolean; maxString: number };

function cutString(s: string, cap: Cap): string {
  if (s.length <= cap.maxString && s.length + 2 <= cap.left) {
    cap.left -= s.length + 2;
    return s;
  }
  cap.cut = true;
  let end = Math.max(0, Math.min(cap.maxString, cap.left - 3));
  // Never split a surrogate pair.
  const last = s.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  cap.left -= end + 3;
  return `${s.slice(0, end)}…`;
}

/** `value` within the cap's budget: scalars kept, strings cut, containers kept to `depth` levels and cut at the budget. */
function capValue(value: unknown, cap: Cap, depth: number): unknown {
  if (typeof value === "string") return cutString(value, cap);
  if (value === null || typeof value !== "object") {
    cap.left -= String(value).length;
    return value;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    cap.left -= 2;
    for (const item of value) {
      if (cap.left <= 0) {
        cap.cut = true;
        break;
      }
      if (depth <= 0 && item !== null && typeof item === "object") {
        cap.cut = true;
        continue;
      }
      out.push(capValue(item, cap, depth - 1));
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  cap.left -= 2;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (cap.left <= key.length + 4) {
      cap.cut = true;
      break;
    }
    if (depth <= 0 && item !== null && typeof item === "object") {
      cap.cut = true;
      continue;
    }
    cap.left -= key.length + 4;
    out[key] = capValue(item, cap, depth - 1);
  }
  return out;
}

/**
 * `attrs` within `budget` serialized characters: unchanged when they fit, else cut (strings to `maxString`,
 * containers below `depth` levels left out) with `truncated: true`.
 */
export function capAttrs(
  attrs: Record<string, unknown>,
  { budget, maxString, depth }: { budget: number; maxString: number; depth: number },
): { attrs: Record<string, unknown>; truncated: boolean } {
  if (JSON.stringify(attrs).length <= budget) return { attrs, truncated: false };
  const cap: Cap = { left: budget, cut: false, maxString };
  const out = capValue(attrs, cap, depth) as Record<string, unknown>;
  return { attrs: out, truncated: true };
}

/** An event as a page ships it among others: whole when its attrs are small, else their summary (`attrs_truncated`). */
export function eventSummary(e: StoredEvent): StoredEvent {
  const { attrs, truncated } = capAttrs(e.attrs, {
    budget: SUMMARY_ATTRS_CHARS,
    maxString: SUMMARY_STRING_CHARS,
    depth: 0,
  });
  return truncated ? { ...e, attrs, attrs_truncated: true } : e;
}

/** One event's detail: whole up to {@link DETAIL_ATTRS_CHARS}, else cut (`attrs_truncated`). */
export function eventDetail(e: StoredEvent): StoredEvent {
  const { attrs, truncated } = capAttrs(e.attrs, {
    budget: DETAIL_ATTRS_CHARS,
    maxString: DETAIL_STRING_CHARS,
    depth: 32,
  });
  return truncated ? { ...e, attrs, attrs_truncated: true } : e;
}
