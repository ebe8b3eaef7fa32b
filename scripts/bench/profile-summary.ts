/**
 * `npx tsx scripts/bench/profile-summary.ts <file.cpuprofile> [--top N]` — where a V8 CPU profile (as written by
 * `npm run bench -- <name> --cpu-prof`) spent its time: self time summed by function (name, file, line) and by
 * file/package, with the share of all samples. Idle and GC appear as V8 names them ("(idle)", "(garbage collector)").
 * A file under node_modules is grouped by package, so "next", "postgres", "zod", "drizzle-orm" read as one line each.
 */
import fs from "node:fs";

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
};
type Profile = { nodes: Node[]; startTime: number; endTime: number; samples?: number[]; timeDeltas?: number[] };

/** The package (or app file) a script URL belongs to. */
export function groupOf(url: string): string {
  if (!url) return "(native / V8)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    const pkg = rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
    // Next's compiled bundles of other packages: name the inner package.
    const compiled = url.indexOf("/compiled/", nm);
    if (pkg === "next" && compiled >= 0) return `next/compiled/${url.slice(compiled + 10).split("/")[0]}`;
    return pkg;
  }
  if (url.startsWith("node:")) return url;
  const chunk = url.indexOf("/server/chunks/");
  if (chunk >= 0) return `app chunk ${url.slice(chunk + 15)}`;
  return url.replace(/^file:\/\//, "");
}

function main(): void {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith("--"));
  const topIdx = args.indexOf("--top");
  const top = topIdx >= 0 ? Number(args[topIdx + 1]) : 40;
  if (!file) {
    console.error("usage: tsx scripts/bench/profile-summary.ts <file.cpuprofile> [--top N]");
    process.exit(2);
  }
  const p = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  // Self time per node from samples × time deltas (µs); falls back to hit counts.
  const self = new Map<number, number>();
  if (p.samples && p.timeDeltas) {
    for (let i = 0; i < p.samples.length; i++) {
      const dt = p.timeDeltas[i + 1] ?? 0;
      self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + Math.max(0, dt));
    }
  } else {
    const per =
      (p.endTime - p.startTime) /
      Math.max(
        1,
        p.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0),
      );
    for (const n of p.nodes) self.set(n.id, (n.hitCount ?? 0) * per);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const busy = [...self]
    .filter(([id]) => byId.get(id)!.callFrame.functionName !== "(idle)")
    .reduce((a, [, v]) => a + v, 0);
  const fn = new Map<string, number>();
  const grp = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    if (n.callFrame.functionName === "(idle)") continue;
    const g = groupOf(n.callFrame.url);
    const key = `${n.callFrame.functionName || "(anonymous)"}  ${g}:${n.callFrame.lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    grp.set(g, (grp.get(g) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  console.log(
    `profile ${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s not idle (shares below are of that)`,
  );
  console.log("\nself time by package / file:");
  for (const [g, us] of [...grp].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)} ${pct(us)}  ${g}`);
  console.log("\nself time by function:");
  for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)} ${pct(us)}  ${k}`);
}

main();
