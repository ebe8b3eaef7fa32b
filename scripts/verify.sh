#!/usr/bin/env bash
# The one verification script (`npm test`): format check, lint, dead code (knip), typecheck, unit tests, production build,
# integration tests (real PostgreSQL + the built server), end-to-end tests (Playwright in Debian Chromium) and the
# integration tests once more through PgBouncer in transaction pooling mode
# (docs/decisions/0051-through-a-connection-pooler.md).
# First, scripts/provision.sh gets what the tests need when it is missing (Chromium, a running PostgreSQL, the test
# database), saying so in one line before each action.
#
# Env:
#   TEST_DATABASE_URL  PostgreSQL for the integration and e2e suites (default: DATABASE_URL, else
#                      postgres://postgres@127.0.0.1:5432/custody_test; created if missing)
#   NEXT_DIST_DIR      build directory (default .next)
#   VERIFY_BUILD       "always" (default: rebuild only when a source is newer than the last build)
#   VERIFY_POOLER      "skip" leaves out the integration tests through PgBouncer (default: run them)
#   PGBOUNCER_PORT     the port of that PgBouncer (default 6433)
set -euo pipefail
cd "$(dirname "$0")/.."

export NEXT_TELEMETRY_DISABLED=1
export TEST_DATABASE_URL="${TEST_DATABASE_URL:-${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/custody_test}}"
DIST_DIR="${NEXT_DIST_DIR:-.next}"

started=$(date +%s)
current=""
finish() {
  local code=$?
  local total=$(( $(date +%s) - started ))
  if [ "$code" -eq 0 ]; then
    printf '\n== verify: all steps passed in %ds\n' "$total"
  else
    printf '\n== verify: FAILED at step "%s" (exit %d) after %ds\n' "$current" "$code" "$total" >&2
  fi
}
trap finish EXIT

step() {
  current="$1"
  shift
  local t0
  t0=$(date +%s)
  printf '\n== %s\n' "$current"
  "$@"
  printf -- '-- %s: ok (%ds)\n' "$current" "$(( $(date +%s) - t0 ))"
}

build_is_fresh() {
  [ "${VERIFY_BUILD:-}" != "always" ] || return 1
  [ -f "$DIST_DIR/BUILD_ID" ] || return 1
  local newer
  newer=$(find app components lib db public proxy.ts next.config.ts postcss.config.mjs package-lock.json tsconfig.json \
    -type f -newer "$DIST_DIR/BUILD_ID" -print -quit 2>/dev/null || true)
  [ -z "$newer" ]
}

build() {
  if build_is_fresh; then
    echo "$DIST_DIR/BUILD_ID is newer than every source file: using that build (VERIFY_BUILD=always rebuilds)."
  else
    npm run --silent build
  fi
}

# The integration suite once more with the servers and the tests' database handles going through PgBouncer in
# transaction pooling mode (scripts/pgbouncer.sh, installed with apt-get when missing) with DATABASE_POOLER=transaction;
# migrations run through it too. This pass also serves every route through Next's request pipeline
# (CUSTODY_LEAN_ROUTES=off, docs/decisions/0053-lean-layer-for-hot-routes.md), so the whole suite runs against the lean
# layer's hot routes (the first pass) and against the pages' server (this one); lean-routes.test.ts starts one of each. The pooler test itself (tests/integration/pooler.test.ts) starts its own PgBouncer in
# front of the direct URL, TEST_DATABASE_DIRECT_URL. Left out of this pass: the tests that start their own database
# servers rather than use the test database (failover: pg_auto_failover nodes; pglite-crash: an embedded PGlite), which
# the pooler never sits in front of.
pooled_integration() {
  local pooled code=0
  pooled=$(PGBOUNCER_UPSTREAM="$TEST_DATABASE_URL" bash scripts/pgbouncer.sh start)
  TEST_DATABASE_DIRECT_URL="$TEST_DATABASE_URL" TEST_DATABASE_URL="$pooled" DATABASE_POOLER=transaction CUSTODY_LEAN_ROUTES=off \
    npm run --silent test:integration -- --exclude tests/integration/failover.test.ts \
    --exclude tests/integration/pglite-crash.test.ts || code=$?
  PGBOUNCER_UPSTREAM="$TEST_DATABASE_URL" bash scripts/pgbouncer.sh stop
  return "$code"
}

# shellcheck source=scripts/provision.sh
source scripts/provision.sh

echo "== verify: test database $(node -e 'const u=new URL(process.argv[1]); if (u.password) u.password="***"; console.log(u.toString())' "$TEST_DATABASE_URL"), build dir $DIST_DIR"
step "format" npm run --silent format:check
step "lint" npm run --silent lint
step "dead code (knip)" npm run --silent knip
step "typecheck" npm run --silent typecheck
step "unit tests" npm run --silent test:unit
step "build" build
step "integration tests" npm run --silent test:integration
step "end-to-end tests" npm run --silent test:e2e
if [ "${VERIFY_POOLER:-}" = "skip" ]; then
  echo "VERIFY_POOLER=skip: the integration tests through PgBouncer are left out."
else
  step "integration tests through PgBouncer" pooled_integration
fi
