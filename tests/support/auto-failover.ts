/**
 * A pg_auto_failover formation on this machine for the failover test (docs/decisions/0052-database-failover.md): a
 * monitor and two PostgreSQL nodes, each its own data directory (under one temporary directory) and port, run by
 * `pg_autoctl` as the `postgres` user. It installs Debian's `postgresql-<major>-auto-failover` package when
 * `pg_autoctl` is missing (root, or passwordless sudo), starts the formation, waits for `primary` + `secondary`, and
 * gives the multi-host URL the servers use (`target_session_attrs=read-write`). {@link Formation.killPrimary} makes
 * the primary's machine die (`kill -9` of its postmaster, its backends and its keeper); {@link Formation.stop} ends
 * every process the formation started and removes its directories, whatever state it is in. No test framework
 * imports here.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** The monitor's timing settings for the test: a dead primary is noticed in about 3 s instead of about 30 s. */
const FAST_MONITOR = {
  "pgautofailover.health_check_period": "1000",
  "pgautofailover.health_check_timeout": "1000",
  "pgautofailover.health_check_max_retries": "1",
  "pgautofailover.health_check_retry_delay": "500",
  "pgautofailover.node_considered_unhealthy_timeout": "3000",
  "pgautofailover.primary_demote_timeout": "3000",
};

export type Replication = "sync" | "async";

type NodeState = { name: string; port: number; reported: string; goal: string };

type Node = { name: string; port: number; pgdata: string; child: ChildProcess | null };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `sh -c` as root, or through `sudo -n` otherwise. */
function asRoot(args: string[], env: Record<string, string> = {}) {
  const root = process.getuid?.() === 0;
  const [cmd, ...rest] = root ? args : ["sudo", "-n", ...args];
  return spawnSync(cmd!, rest, { encoding: "utf8", env: { ...process.env, ...env } });
}

/** The bin directory of the newest PostgreSQL server installed from Debian's packages. */
function postgresBinDir(): string {
  const base = "/usr/lib/postgresql";
  const majors = fs.existsSync(base)
    ? fs
        .readdirSync(base)
        .filter((d) => /^\d+$/.test(d) && fs.existsSync(path.join(base, d, "bin", "pg_ctl")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!majors.length) throw new Error(`No PostgreSQL server under ${base}: install postgresql (Debian's package).`);
  return path.join(base, majors[0]!, "bin");
}

/**
 * `pg_autoctl`: found, or installed with `apt-get install postgresql-<major>-auto-failover`.
 * @throws Error saying what failed when it is missing and cannot be installed (the test then fails; never skipped).
 */
function pgAutoctl(): string {
  const found = spawnSync("sh", ["-c", "command -v pg_autoctl"], { encoding: "utf8" });
  if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  const major = path.basename(path.dirname(postgresBinDir()));
  const pkg = `postgresql-${major}-auto-failover`;
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  let install = asRoot(["apt-get", "install", "-y", "-q", "--no-install-recommends", pkg], env);
  if (install.status !== 0) {
    asRoot(["apt-get", "update", "-q"], env);
    install = asRoot(["apt-get", "install", "-y", "-q", "--no-install-recommends", pkg], env);
  }
  const again = spawnSync("sh", ["-c", "command -v pg_autoctl"], { encoding: "utf8" });
  if (install.status !== 0 || again.status !== 0)
    throw new Error(
      `The failover test needs pg_autoctl (Debian's ${pkg}) and could not install it: ` +
        `${(install.stderr || install.stdout || String(install.error)).trim().slice(-800)}. ` +
        `Install it (apt-get install ${pkg}) or run the suite as root.`,
    );
  return again.stdout.trim();
}

/** A TCP port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** The ids of `pid`'s descendants (read from /proc), children before grandchildren. */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      // pid (comm) state ppid …; comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(d), ppid);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  let level = [pid];
  while (level.length) {
    const next = [...parent].filter(([, ppid]) => level.includes(ppid)).map(([p]) => p);
    out.push(...next);
    level = next;
  }
  return out;
}

function kill9(pids: number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, "SIGKILL");
    } catch {
      // gone already
    }
  }
}

/**
 * The running postmaster's pid from `postmaster.pid` (its first line), when that process is alive and is the
 * postmaster of `pgdata` (its command line names the directory: a stale file's pid may belong to another process now);
 * else null.
 */
function postmasterPid(pgdata: string): number | null {
  try {
    const pid = Number(fs.readFileSync(path.join(pgdata, "postmaster.pid"), "utf8").split("\n")[0]);
    if (!Number.isInteger(pid) || pid <= 0) return null;
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return cmdline.includes(pgdata) ? pid : null;
  } catch {
    return null;
  }
}

export class Formation {
  readonly dir: string;
  private readonly bin: string;
  private readonly autoctl: string;
  private monitor!: Node;
  private nodes: Node[] = [];
  private readonly log: string;

  private constructor(autoctl: string) {
    this.autoctl = autoctl;
    this.bin = postgresBinDir();
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-failover-"));
    this.log = path.join(this.dir, "formation.log");
    fs.chmodSync(this.dir, 0o755);
    fs.mkdirSync(path.join(this.dir, "xdg-run"), { mode: 0o700 });
    asRoot(["chown", "-R", "postgres:postgres", this.dir]);
  }

  /**
   * Installs pg_autoctl when needed, creates the monitor and two nodes on free ports with database `dbname`, and
   * waits until one is `primary` and the other `secondary`. `replication` (default `sync`): synchronous — the standby
   * is in the replication quorum (pg_auto_failover's default), so the primary's synchronous_standby_names is
   * `ANY 1 (…)`; `async` — the standby is created with `--replication-quorum false`, so commits do not wait for it.
   * On any failure everything started so far is stopped and removed before the error is thrown.
   */
  static async start(opts: { dbname: string; replication?: Replication }): Promise<Formation> {
    const f = new Formation(pgAutoctl());
    try {
      const ports = new Set<number>();
      while (ports.size < 3) ports.add(await freePort());
      const [mon, p1, p2] = [...ports];
      f.monitor = { name: "monitor", port: mon!, pgdata: path.join(f.dir, "monitor"), child: null };
      f.monitor.child = f.run(["create", "monitor", ...f.common(f.monitor), "--run"], "monitor");
      await f.waitForSql(f.monitor.port, "pg_auto_failover", "select 1 from pgautofailover.formation", 60_000);
      // One statement per psql call: ALTER SYSTEM refuses to run inside the transaction a multi-statement -c opens.
      for (const [k, v] of Object.entries(FAST_MONITOR))
        await f.psql(f.monitor.port, "pg_auto_failover", `alter system set ${k} = '${v}'`);
      await f.psql(f.monitor.port, "pg_auto_failover", "select pg_reload_conf()");
      const monitorUri = `postgres://autoctl_node@127.0.0.1:${f.monitor.port}/pg_auto_failover?sslmode=disable`;
      for (const [i, port] of [p1!, p2!].entries()) {
        const node: Node = { name: `node_${i + 1}`, port, pgdata: path.join(f.dir, `node${i + 1}`), child: null };
        f.nodes.push(node);
        node.child = f.run(
          [
            "create",
            "postgres",
            ...f.common(node),
            "--name",
            node.name,
            "--monitor",
            monitorUri,
            "--dbname",
            opts.dbname,
            ...(i === 1 && opts.replication === "async" ? ["--replication-quorum", "false"] : []),
            "--run",
          ],
          node.name,
        );
        // The first node must be the primary before the second joins, so which is which is known.
        await f.waitForStates(
          i === 0 ? { node_1: ["single"] } : { node_1: ["primary"], node_2: ["secondary"] },
          120_000,
          {
            // The standby's base backup waits for a checkpoint on the primary; ask for one rather than wait for it.
            whileWaiting: i === 1 ? () => f.psql(p1!, "postgres", "checkpoint").catch(() => {}) : undefined,
          },
        );
      }
      return f;
    } catch (err) {
      const tail = f.logTail();
      await f.stop();
      throw new Error(`The pg_auto_failover formation did not start: ${(err as Error).message}\n${tail}`, {
        cause: err,
      });
    }
  }

  private common(node: Node): string[] {
    return [
      "--pgdata",
      node.pgdata,
      "--pgport",
      String(node.port),
      "--hostname",
      "127.0.0.1",
      "--auth",
      "trust",
      "--no-ssl",
      "--pgctl",
      path.join(this.bin, "pg_ctl"),
    ];
  }

  /** Environment of every pg_autoctl run: its configuration, state and pid files kept inside the formation's directory. */
  private env(): string[] {
    return [
      `PATH=${this.bin}:/usr/local/bin:/usr/bin:/bin`,
      `XDG_CONFIG_HOME=${path.join(this.dir, "xdg-config")}`,
      `XDG_DATA_HOME=${path.join(this.dir, "xdg-data")}`,
      // Its pid files too: by default every pg_autoctl of the machine shares /tmp/pg_autoctl, and the monitor and the
      // nodes starting at once raced to create it ("Failed to create state directory … File exists").
      `XDG_RUNTIME_DIR=${path.join(this.dir, "xdg-run")}`,
      `HOME=${this.dir}`,
    ];
  }

  private runuserArgs(args: string[]): string[] {
    return ["runuser", "-u", "postgres", "--", "env", ...this.env(), this.autoctl, ...args];
  }

  /** Starts a long-running `pg_autoctl … --run` in its own process group, its output appended to the log. */
  private run(args: string[], label: string): ChildProcess {
    const out = fs.openSync(this.log, "a");
    fs.writeSync(out, `\n--- ${label}: pg_autoctl ${args.join(" ")} ---\n`);
    const [cmd, ...rest] = this.runuserArgs(args);
    const child = spawn(cmd!, rest, { cwd: this.dir, stdio: ["ignore", out, out], detached: true });
    fs.closeSync(out);
    return child;
  }

  /** Runs SQL with psql as `postgres` over TCP; resolves with its output (rows unaligned, `|`-separated). */
  psql(port: number, db: string, query: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        path.join(this.bin, "psql"),
        [
          "-X",
          "-q",
          "-At",
          "-v",
          "ON_ERROR_STOP=1",
          "-h",
          "127.0.0.1",
          "-p",
          String(port),
          "-U",
          "postgres",
          "-d",
          db,
          "-c",
          query,
        ],
        { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PGCONNECT_TIMEOUT: "3" } },
      );
      let out = "";
      let errOut = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (errOut += d.toString()));
      child.on("close", (code) =>
        code === 0 ? resolve(out.trim()) : reject(new Error(errOut.trim() || `psql ${code}`)),
      );
    });
  }

  private async waitForSql(port: number, db: string, query: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      try {
        await this.psql(port, db, query);
        return;
      } catch (err) {
        last = (err as Error).message;
      }
      await sleep(300);
    }
    throw new Error(`port ${port} did not answer "${query}" in ${timeoutMs} ms: ${last}`);
  }

  /** The nodes as the monitor sees them. */
  async states(): Promise<NodeState[]> {
    const out = await this.psql(
      this.monitor.port,
      "pg_auto_failover",
      "select nodename, nodeport, reportedstate, goalstate from pgautofailover.node order by nodeid",
    );
    return out
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [name, port, reported, goal] = line.split("|");
        return { name: name!, port: Number(port), reported: reported!, goal: goal! };
      });
  }

  /** Waits until every named node both reports and is assigned one of the given states. */
  async waitForStates(
    want: Record<string, string[]>,
    timeoutMs: number,
    opts: { whileWaiting?: () => Promise<unknown> } = {},
  ): Promise<NodeState[]> {
    const deadline = Date.now() + timeoutMs;
    let last: NodeState[] = [];
    let tick = 0;
    while (Date.now() < deadline) {
      last = await this.states().catch(() => last);
      const ok = Object.entries(want).every(([name, states]) => {
        const n = last.find((s) => s.name === name);
        return n && states.includes(n.reported) && states.includes(n.goal);
      });
      if (ok) return last;
      if (opts.whileWaiting && tick++ % 8 === 0) await opts.whileWaiting();
      await sleep(250);
    }
    throw new Error(`the formation did not reach ${JSON.stringify(want)} in ${timeoutMs} ms: ${JSON.stringify(last)}`);
  }

  /**
   * `postgres://postgres@127.0.0.1:<node1>,127.0.0.1:<node2>/<db>?target_session_attrs=read-write`; with
   * `standbyFirst`, the nodes in reverse order (the standby first while node_1 is the primary).
   */
  url(dbname: string, opts: { standbyFirst?: boolean } = {}): string {
    const nodes = opts.standbyFirst ? [...this.nodes].reverse() : this.nodes;
    const hosts = nodes.map((n) => `127.0.0.1:${n.port}`).join(",");
    return `postgres://postgres@${hosts}/${dbname}?target_session_attrs=read-write`;
  }

  /** The node that is primary now (per the monitor). */
  async primary(): Promise<NodeState> {
    const p = (await this.states()).find((s) => s.reported === "primary" && s.goal === "primary");
    if (!p) throw new Error(`no primary: ${JSON.stringify(await this.states())}`);
    return p;
  }

  /** The primary's synchronous_standby_names (empty: commits do not wait for the standby). */
  async synchronousStandbyNames(): Promise<string> {
    const p = await this.primary();
    return this.psql(p.port, "postgres", "show synchronous_standby_names");
  }

  /**
   * Holds back replication as a slow or congested link would: SIGSTOP of the primary's WAL sender (the process of
   * the primary's postmaster whose title names `walsender`), so no more WAL leaves the primary. The primary keeps
   * committing: synchronous commits wait for the standby, asynchronous ones are acknowledged with the standby behind.
   * @returns the function that lets it go on (SIGCONT).
   */
  async holdReplication(): Promise<() => void> {
    const p = await this.primary();
    const node = this.nodes.find((n) => n.name === p.name)!;
    const pm = postmasterPid(node.pgdata);
    if (!pm) throw new Error(`${node.name} has no running postmaster`);
    const senders = descendants(pm).filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("walsender");
      } catch {
        return false;
      }
    });
    if (!senders.length) throw new Error(`${node.name} has no WAL sender`);
    for (const pid of senders) process.kill(pid, "SIGSTOP");
    return () => {
      for (const pid of senders) {
        try {
          process.kill(pid, "SIGCONT");
        } catch {
          // gone
        }
      }
    };
  }

  /**
   * The primary's machine dies: `kill -9` of its postmaster (the pid in `postmaster.pid`), then of every other
   * process of that node — its backends, and the `pg_autoctl` keeper that would otherwise restart PostgreSQL in place
   * within a second (no failover would happen).
   * @returns the node that was killed.
   */
  async killPrimary(): Promise<NodeState> {
    const p = await this.primary();
    const node = this.nodes.find((n) => n.name === p.name)!;
    const pm = postmasterPid(node.pgdata);
    if (!pm) throw new Error(`${node.name} has no running postmaster`);
    const keeper = node.child?.pid ? [node.child.pid, ...descendants(node.child.pid)] : [];
    kill9([pm, ...keeper.filter((x) => x !== pm), ...descendants(pm)]);
    return p;
  }

  /** Waits until the monitor reports a primary other than `old` that accepts writes; resolves with it. */
  async waitForPromotion(old: NodeState, timeoutMs = 90_000): Promise<NodeState> {
    const deadline = Date.now() + timeoutMs;
    let last: NodeState[] = [];
    while (Date.now() < deadline) {
      last = await this.states().catch(() => last);
      const next = last.find((s) => s.name !== old.name && ["wait_primary", "primary"].includes(s.reported));
      if (next) {
        const rw = await this.psql(next.port, "postgres", "select not pg_is_in_recovery()").catch(() => "f");
        if (rw === "t") return next;
      }
      await sleep(100);
    }
    throw new Error(`no standby was promoted in ${timeoutMs} ms: ${JSON.stringify(last)}`);
  }

  /** The last lines of the formation's log (pg_autoctl output), for failure messages. */
  logTail(lines = 60): string {
    try {
      return fs.readFileSync(this.log, "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "(no formation log)";
    }
  }

  /**
   * Ends every process the formation started (pg_autoctl, PostgreSQL and their children: `pg_autoctl stop
   * --immediate`, then SIGKILL of what is left) and removes its directory. Safe to call twice or half-started.
   */
  async stop(): Promise<void> {
    const all = [...this.nodes, this.monitor].filter(Boolean);
    await Promise.all(
      all
        .filter((n) => n.child?.pid && n.child.exitCode === null && n.child.signalCode === null)
        .map(
          (n) =>
            new Promise<void>((resolve) => {
              const [cmd, ...rest] = this.runuserArgs(["stop", "--pgdata", n.pgdata, "--immediate"]);
              const child = spawn(cmd!, rest, { cwd: this.dir, stdio: "ignore" });
              const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
              child.on("close", () => {
                clearTimeout(timer);
                resolve();
              });
              child.on("error", () => resolve());
            }),
        ),
    );
    await sleep(500);
    for (const n of all) {
      const pids = n.child?.pid ? [n.child.pid, ...descendants(n.child.pid)] : [];
      const pm = postmasterPid(n.pgdata);
      if (pm) pids.push(pm, ...descendants(pm));
      kill9(pids);
    }
    await sleep(200);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
