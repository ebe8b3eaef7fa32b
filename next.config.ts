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
  // Trace exporters append their own path to an endpoint: OTLP's `/v1/traces` (OTEL_EXPORTER_OTLP_ENDPOINT, the
  // Collector's otlphttp `endpoint`) and the OpenAI Agents SDK's `/v1/traces/ingest`. Both are served at the server's
  // root too, so the endpoint can be the bare host as well as `<host>/api` (docs/api.md, decision 0039).
  // Settings has one page per section (decision 0044); /settings itself opens the first section
  // (app/(dashboard)/settings/_components/sections.ts). A redirect here, not a page: it answers before any session check.
  async redirects() {
    return [{ source: "/settings", destination: "/settings/members", permanent: false }];
  },
  async rewrites() {
    return [
      { source: "/v1/traces", destination: "/api/v1/traces" },
      { source: "/v1/traces/ingest", destination: "/api/v1/traces/ingest" },
    ];
  },
};

export default nextConfig;
