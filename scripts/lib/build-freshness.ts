/**
 * Is a `next build` older than the sources it was made from? Shared by `npm run demo` and the benchmarks
 * (scripts/verify.sh lists the same paths for `find -newer`).
 */
import fs from "node:fs";
import path from "node:path";

/** Everything a production build depends on. */
export const BUILD_SOURCES = [
  "app",
  "components",
  "lib",
  "db",
  "public",
  "proxy.ts",
  "next.config.ts",
  "postcss.config.mjs",
  "package-lock.json",
  "tsconfig.json",
];

/** Newest modification time (ms) of the files under `paths` (missing paths are skipped). */
export function newestMtime(paths: string[]): number {
  let newest = 0;
  const walk = (p: string) => {
    if (!fs.existsSync(p)) return;
    const st = fs.statSync(p);
    if (st.isDirectory()) {
      for (const entry of fs.readdirSync(p)) walk(path.join(p, entry));
    } else if (st.mtimeMs > newest) newest = st.mtimeMs;
  };
  paths.forEach(walk);
  return newest;
}

/** Milliseconds since epoch of the newest build source under `root`. */
export function newestSourceMtime(root: string): number {
  return newestMtime(BUILD_SOURCES.map((p) => path.join(root, p)));
}
