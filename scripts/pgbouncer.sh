#!/usr/bin/env bash
# A PgBouncer of our own in transaction pooling mode, in front of the PostgreSQL of a URL, for the tests and the
# benchmarks that run the servers through a pooler (docs/decisions/0051-through-a-connection-pooler.md).
#
#   scripts/pgbouncer.sh start   installs pgbouncer with apt-get when it is missing, writes its configuration in its own
#                                directory, starts it in the background with its own pidfile, waits until it accepts
#                                connections and prints the pooled URL (the upstream URL with the pooler's host and port)
#   scripts/pgbouncer.sh url     prints the pooled URL without starting anything
#   scripts/pgbouncer.sh stop    stops it (safe shutdown, then SIGKILL after 10 s) and removes its directory
#
# Env:
#   PGBOUNCER_UPSTREAM   the PostgreSQL URL to pool (default TEST_DATABASE_URL, else DATABASE_URL, else
#                        postgres://postgres@127.0.0.1:5432/custody_test); its user (and password) may connect
#   PGBOUNCER_PORT       the port it listens on, on 127.0.0.1 (default 6433)
#   PGBOUNCER_POOL_SIZE  server connections per database and user (default_pool_size, default 20)
#   PGBOUNCER_DIR        its directory: configuration, pidfile, log (default /tmp/run-custody-pgbouncer-<port>)
#
# PgBouncer refuses to run as root: started by root, it runs as the `postgres` user (-u), which owns its directory.
# Any database name is pooled (`* =`), so tests may create and use scratch databases through it.
set -euo pipefail

PGB_PORT="${PGBOUNCER_PORT:-6433}"
PGB_DIR="${PGBOUNCER_DIR:-/tmp/run-custody-pgbouncer-$PGB_PORT}"
PGB_UPSTREAM="${PGBOUNCER_UPSTREAM:-${TEST_DATABASE_URL:-${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/custody_test}}}"
PGB_POOL_SIZE="${PGBOUNCER_POOL_SIZE:-20}"

pgb_say() { printf '[pgbouncer] %s\n' "$*" >&2; }
pgb_die() { printf '[pgbouncer] ERROR: %s\n' "$*" >&2; exit 1; }

# A part of the upstream URL: host, port, user, password, or `pooled` (the URL through the pooler).
pgb_url() {
  node -e 'const u = new URL(process.argv[1]); const [p, port] = process.argv.slice(2);
    if (p === "pooled") { u.hostname = "127.0.0.1"; u.port = port; console.log(u.toString()); }
    else console.log(p === "port" ? (u.port || "5432") : p === "user" ? decodeURIComponent(u.username || "postgres")
      : p === "password" ? decodeURIComponent(u.password) : u.hostname.replace(/^\[|\]$/g, ""));' \
    "$PGB_UPSTREAM" "$1" "$PGB_PORT"
}

pgb_pid() { [ -f "$PGB_DIR/pgbouncer.pid" ] && cat "$PGB_DIR/pgbouncer.pid" 2>/dev/null || true; }
# Alive: the pidfile's process exists and is this directory's PgBouncer. A pidfile left behind (a run killed before
# its stop) may name a pid the system has since given to another process, which must be neither trusted nor signalled.
pgb_alive() {
  local pid
  pid=$(pgb_pid)
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$PGB_DIR/pgbouncer.ini"
}
pgb_accepting() { (exec 3<>"/dev/tcp/127.0.0.1/$PGB_PORT") 2>/dev/null; }

pgb_install() {
  command -v pgbouncer >/dev/null 2>&1 && return 0
  [ -x /usr/sbin/pgbouncer ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || pgb_die "pgbouncer is missing and installing it needs root or sudo"
    sudo="sudo"
  fi
  pgb_say "pgbouncer is missing: installing Debian's pgbouncer package (apt-get)"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends pgbouncer >/dev/null
}

pgb_start() {
  if pgb_alive; then
    if pgb_accepting; then
      pgb_say "already running (pid $(pgb_pid)) on 127.0.0.1:$PGB_PORT"
      pgb_url pooled
      return 0
    fi
    pgb_say "pid $(pgb_pid) does not accept connections on 127.0.0.1:$PGB_PORT (shutting down?): stopping it first"
    pgb_stop
  fi
  pgb_accepting && pgb_die "something else already listens on 127.0.0.1:$PGB_PORT (set PGBOUNCER_PORT)"
  pgb_install
  local bin user password
  bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
  user=$(pgb_url user)
  password=$(pgb_url password)
  rm -rf "$PGB_DIR"
  mkdir -p "$PGB_DIR"
  # The one user the URL names; with auth_type = trust PgBouncer only checks that it is listed, and logs in to
  # PostgreSQL with the password given here (if any).
  printf '"%s" "%s"\n' "${user//\"/\"\"}" "${password//\"/\"\"}" >"$PGB_DIR/userlist.txt"
  cat >"$PGB_DIR/pgbouncer.ini" <<EOF
[databases]
* = host=$(pgb_url host) port=$(pgb_url port)

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGB_PORT
unix_socket_dir =
auth_type = trust
auth_file = $PGB_DIR/userlist.txt
pool_mode = transaction
default_pool_size = $PGB_POOL_SIZE
max_client_conn = 1000
max_db_connections = 0
ignore_startup_parameters = extra_float_digits
server_lifetime = 3600
server_idle_timeout = 60
pidfile = $PGB_DIR/pgbouncer.pid
logfile = $PGB_DIR/pgbouncer.log
log_connections = 0
log_disconnections = 0
EOF
  chmod 600 "$PGB_DIR/userlist.txt"
  local as_user=()
  if [ "$(id -u)" -eq 0 ]; then
    chown -R postgres "$PGB_DIR"
    as_user=(-u postgres)
  fi
  "$bin" -d "${as_user[@]}" "$PGB_DIR/pgbouncer.ini" >>"$PGB_DIR/start.log" 2>&1 ||
    pgb_die "pgbouncer did not start: $(tail -5 "$PGB_DIR/start.log" "$PGB_DIR/pgbouncer.log" 2>/dev/null)"
  local i
  for i in $(seq 1 100); do
    pgb_accepting && pgb_alive && break
    sleep 0.1
  done
  pgb_accepting || pgb_die "pgbouncer does not accept connections on 127.0.0.1:$PGB_PORT: $(tail -5 "$PGB_DIR/pgbouncer.log" 2>/dev/null)"
  pgb_say "running (pid $(pgb_pid)) on 127.0.0.1:$PGB_PORT, transaction pooling, $PGB_POOL_SIZE server connections per database, log $PGB_DIR/pgbouncer.log"
  pgb_url pooled
}

pgb_stop() {
  local pid i
  pid=$(pgb_pid)
  if pgb_alive; then
    kill -INT "$pid" 2>/dev/null || true # safe shutdown: waits for clients' transactions
    for i in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    pgb_say "stopped (pid $pid)"
  fi
  rm -rf "$PGB_DIR"
}

case "${1:-}" in
  start) pgb_start ;;
  stop) pgb_stop ;;
  url) pgb_url pooled ;;
  *) pgb_die "usage: scripts/pgbouncer.sh start|stop|url" ;;
esac
