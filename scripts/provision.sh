# Sourced by scripts/verify.sh (`npm test`) before the first step: gets what the tests need when it is missing,
# saying so in one line before each action, and does nothing else. Safe to run again: every step checks first.
#   1. Debian's chromium (Playwright never downloads a browser here) when CHROMIUM_PATH / /usr/bin/chromium is missing;
#   2. PostgreSQL for TEST_DATABASE_URL when it is local and not accepting connections: started (pg_ctlcluster), or
#      installed first (apt-get) when absent;
#   3. the test database, created when missing (a fresh Debian cluster that wants a password over TCP gets one for
#      role postgres, and TEST_DATABASE_URL is changed to use it).
# Installing and starting need root or sudo; without them it stops with a message that says what to do.
# Expects TEST_DATABASE_URL to be set; exports it (possibly with a password added).

prov_say() { printf '[provision] %s\n' "$*"; }
prov_die() { printf '[provision] ERROR: %s\n' "$*" >&2; exit 1; }

PROV_SUDO=""
prov_root() {
  if [ "$(id -u)" -ne 0 ] && [ -z "$PROV_SUDO" ]; then
    command -v sudo >/dev/null 2>&1 || prov_die "$1 needs root or sudo; do it yourself, or run as root"
    PROV_SUDO="sudo"
  fi
}
PROV_APT_UPDATED=0
prov_apt_install() {
  prov_root "installing $*"
  command -v apt-get >/dev/null 2>&1 || prov_die "apt-get is not available: install $* yourself"
  if [ "$PROV_APT_UPDATED" -eq 0 ]; then
    $PROV_SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    PROV_APT_UPDATED=1
  fi
  $PROV_SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null
}

# 1. Chromium.
PROV_CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$PROV_CHROMIUM" ]; then
  [ -n "${CHROMIUM_PATH:-}" ] && prov_die "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable"
  prov_say "Chromium is missing: installing Debian's chromium package (apt-get) for the end-to-end tests"
  prov_apt_install chromium
  [ -x /usr/bin/chromium ] || prov_die "chromium did not install to /usr/bin/chromium"
fi

# 2. PostgreSQL.
prov_url_part() { node -e 'const u = new URL(process.argv[1]); const p = process.argv[2];
  console.log(p === "db" ? decodeURIComponent(u.pathname.slice(1)) : p === "port" ? (u.port || "5432") : p === "admin" ? (u.pathname = "/postgres", u.toString()) : p === "shown" ? (u.password && (u.password = "***"), u.toString()) : u.hostname)' "$TEST_DATABASE_URL" "$1"; }
PROV_HOST=$(prov_url_part host)
PROV_PORT=$(prov_url_part port)
PROV_DB=$(prov_url_part db)
prov_local=0
case "$PROV_HOST" in 127.0.0.1|localhost|::1|"[::1]") prov_local=1 ;; esac

prov_accepting() {
  if command -v pg_isready >/dev/null 2>&1; then pg_isready -q -h "$PROV_HOST" -p "$PROV_PORT"; return; fi
  node -e 'const s=require("net").connect(+process.argv[2], process.argv[1]); s.on("connect",()=>process.exit(0)); s.on("error",()=>process.exit(1)); setTimeout(()=>process.exit(1),3000)' "$PROV_HOST" "$PROV_PORT"
}

if ! prov_accepting; then
  [ "$prov_local" -eq 1 ] || prov_die "PostgreSQL at $PROV_HOST:$PROV_PORT does not accept connections (not local, so not started here); check TEST_DATABASE_URL"
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ ! -d /etc/postgresql ] || [ -z "$(ls -A /etc/postgresql 2>/dev/null)" ]; then
    prov_say "PostgreSQL is not installed: installing Debian's postgresql package (apt-get)"
    prov_apt_install postgresql
  fi
  PROV_PG_VERSION=$(ls /etc/postgresql | sort -V | tail -n1)
  prov_say "PostgreSQL is not running on $PROV_HOST:$PROV_PORT: starting cluster $PROV_PG_VERSION/main (pg_ctlcluster)"
  prov_root "starting PostgreSQL"
  $PROV_SUDO pg_ctlcluster --skip-systemctl-redirect "$PROV_PG_VERSION" main start || true
  for _ in $(seq 1 30); do
    prov_accepting && break
    sleep 1
  done
  prov_accepting || prov_die "PostgreSQL did not start accepting connections on $PROV_HOST:$PROV_PORT within 30 s"
fi
command -v psql >/dev/null 2>&1 || { prov_say "psql is missing: installing Debian's postgresql-client package (apt-get)"; prov_apt_install postgresql-client; }

# 3. The test database.
PROV_ADMIN=$(prov_url_part admin)
prov_can_connect() { psql "$1" -XAtqc 'select 1' >/dev/null 2>&1; }
if ! prov_can_connect "$PROV_ADMIN"; then
  if [ "$prov_local" -eq 1 ] && ! node -e 'process.exit(new URL(process.argv[1]).password ? 0 : 1)' "$TEST_DATABASE_URL" && command -v runuser >/dev/null 2>&1; then
    prov_say "PostgreSQL wants a password over TCP: giving role postgres the password 'postgres' for the tests"
    prov_root "setting a password for role postgres"
    $PROV_SUDO runuser -u postgres -- psql -XAtqc "alter role postgres with password 'postgres'" >/dev/null
    TEST_DATABASE_URL=$(node -e 'const u=new URL(process.argv[1]); u.username ||= "postgres"; u.password="postgres"; console.log(u.toString())' "$TEST_DATABASE_URL")
    PROV_ADMIN=$(prov_url_part admin)
  fi
  prov_can_connect "$PROV_ADMIN" || prov_die "cannot connect to PostgreSQL as $(prov_url_part shown | sed 's#/[^/]*$#/postgres#'); set TEST_DATABASE_URL to a server where you may create databases"
fi
if [ "$(psql "$PROV_ADMIN" -XAtqc "select 1 from pg_database where datname = '${PROV_DB//\'/\'\'}'")" != "1" ]; then
  prov_say "the test database $PROV_DB does not exist: creating it"
  psql "$PROV_ADMIN" -XAtqc "create database \"${PROV_DB//\"/\"\"}\"" >/dev/null
fi
# A test database migrated by another checkout (a branch whose migrations this one does not have) cannot be migrated
# forward: drizzle applies only migrations newer than the last one it recorded. Such a scratch database is made again.
prov_applied=$(psql "$TEST_DATABASE_URL" -XAtqc "select created_at from drizzle.__drizzle_migrations" 2>/dev/null || true)
if [ -n "$prov_applied" ]; then
  prov_known=$(node -e 'for (const e of require("./db/migrations/meta/_journal.json").entries) console.log(e.when)')
  prov_foreign=$(comm -23 <(printf '%s\n' "$prov_applied" | sort) <(printf '%s\n' "$prov_known" | sort) | head -1)
  if [ -n "$prov_foreign" ]; then
    prov_say "the test database $PROV_DB holds a migration this checkout does not have (made by another branch): making it again"
    psql "$PROV_ADMIN" -XAtqc "drop database \"${PROV_DB//\"/\"\"}\" with (force)" >/dev/null
    psql "$PROV_ADMIN" -XAtqc "create database \"${PROV_DB//\"/\"\"}\"" >/dev/null
  fi
fi
export TEST_DATABASE_URL
