import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite ships WASM and data files that must be loaded from node_modules at run time.
  serverExternalPackages: ["@electric-sql/pglite", "@node-rs/argon2", "postgres"],
  poweredByHeader: false,
  // Type errors are caught by `npm run typecheck` (tsc --noEmit over the whole repo, tests included) in `npm test`;
  // checking again inside every build only doubles the time.
  typescript: { ignoreBuildErrors: true },
  // Lets a second build live beside the main one (parallel test runs, benchmarks): NEXT_DIST_DIR=.next-bench.
  distDir: process.env.NEXT_DIST_DIR || ".next",
};

export default nextConfig;
