/**
 * A structural diff of two JSON values (the approved payload and the one offered now, shown side by side:
 * docs/concepts.md#freshness): every path whose value was added, removed or changed, in document order. Pure; arrays
 * compare by index. Small enough that no dependency is needed.
 */
export type JsonChange = { path: string; kind: "added" | "removed" | "changed"; before?: unknown; after?: unknown };

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const key = (path: string, k: string) =>
  /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;

/** The changes that turn `before` into `after`; `$` is the root. */
export function jsonDiff(before: unknown, after: unknown, path = "$", out: JsonChange[] = [], depth = 0): JsonChange[] {
  if (depth > 64) {
    if (JSON.stringify(before) !== JSON.stringify(after)) out.push({ path, kind: "changed", before, after });
    return out;
  }
  if (isObj(before) && isObj(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const k of keys) {
      const p = key(path, k);
      if (!Object.hasOwn(after, k)) out.push({ path: p, kind: "removed", before: before[k] });
      else if (!Object.hasOwn(before, k)) out.push({ path: p, kind: "added", after: after[k] });
      else jsonDiff(before[k], after[k], p, out, depth + 1);
    }
    return out;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const n = Math.max(before.length, after.length);
    for (let i = 0; i < n; i++) {
      const p = `${path}[${i}]`;
      if (i >= after.length) out.push({ path: p, kind: "removed", before: before[i] });
      else if (i >= before.length) out.push({ path: p, kind: "added", after: after[i] });
      else jsonDiff(before[i], after[i], p, out, depth + 1);
    }
    return out;
  }
  if (before === after) return out;
  if (before === undefined) out.push({ path, kind: "added", after });
  else if (after === undefined) out.push({ path, kind: "removed", before });
  else out.push({ path, kind: "changed", before, after });
  return out;
}
