/**
 * Output of the benchmarks: an aligned two-column table on stdout and `bench-results/<name>.json`.
 */
import fs from "node:fs";
import path from "node:path";

/** A table row (label, value) or a section heading (a lone string). */
export type Row = [string, string | number | null] | string;

/** Formats a number with thousands separators and at most `digits` decimals. */
export function fmt(x: number | null | undefined, digits = 0): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "n/a";
  return x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** Prints `rows` as an aligned table under `title`. */
export function printTable(title: string, rows: Row[]): void {
  const pairs = rows.filter((r): r is [string, string | number | null] => Array.isArray(r));
  const width = Math.max(...pairs.map(([k]) => k.length), 10);
  const line = "─".repeat(width + 26);
  console.log(`\n${title}\n${line}`);
  for (const r of rows) {
    if (typeof r === "string") {
      console.log(`${r}`);
      continue;
    }
    const [k, v] = r;
    console.log(`  ${k.padEnd(width)}  ${v === null ? "n/a" : typeof v === "number" ? fmt(v, 2) : v}`);
  }
  console.log(line);
}

/** Writes `data` as pretty JSON to `<root>/bench-results/<name>.json` and returns the path. */
export function writeResult(root: string, name: string, data: unknown): string {
  const dir = path.join(root, "bench-results");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

/** The `q`-quantile (0..1) of `values` (nearest rank), or null when empty. */
export function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}
