/**
 * A PgBouncer in transaction pooling mode that a test owns, started and stopped through scripts/pgbouncer.sh (which
 * installs it with apt-get when missing and runs it as the `postgres` user when started by root). No test framework
 * imports here.
 */
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";

export type Pooler = {
  /** The upstream URL with the pooler's host and port: the same user, password and database, through PgBouncer. */
  url: string;
  /** The pooled URL of another database on the same server. */
  urlFor: (database: string) => string;
  /** Stops PgBouncer and removes its directory. Safe to call twice. */
  stop: () => void;
};

/**
 * Starts PgBouncer in front of `upstream` on `port`, with `poolSize` server connections per database and user.
 * @throws Error with the script's output when it does not start.
 */
export function startPgBouncer(opts: { upstream: string; port: number; poolSize?: number; root?: string }): Pooler {
  const root = opts.root ?? process.cwd();
  const env = {
    ...process.env,
    PGBOUNCER_UPSTREAM: opts.upstream,
    PGBOUNCER_PORT: String(opts.port),
    PGBOUNCER_POOL_SIZE: String(opts.poolSize ?? 20),
    PGBOUNCER_DIR: path.join(os.tmpdir(), `run-custody-pgbouncer-test-${opts.port}`),
  };
  const script = path.join(root, "scripts", "pgbouncer.sh");
  let url: string;
  try {
    url = execFileSync("bash", [script, "start"], { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`PgBouncer did not start: ${e.stderr || e.message}`, { cause: err });
  }
  let stopped = false;
  return {
    url,
    urlFor: (database) => {
      const u = new URL(url);
      u.pathname = `/${encodeURIComponent(database)}`;
      return u.toString();
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      execFileSync("bash", [script, "stop"], { env, stdio: "ignore" });
    },
  };
}
