/**
 * A `npm start` of the built app that a test owns: started in its own process group on a port of its choosing,
 * killed with any signal (SIGKILL for the crash tests), and started again on the same port and database with the
 * same secrets. Output is appended to one log file across restarts. No test framework imports here.
 */
import { LATE, within } from "./within";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { serverCommand } from "./env";

export type NextServerOptions = {
  /** Project root (where node_modules/.bin/next and the build live). */
  root: string;
  port: number;
  /** The whole environment of the server (see serverEnv in tests/support/env.ts). */
  env: NodeJS.ProcessEnv;
  /** File the server's stdout and stderr are appended to. */
  logFile: string;
  /** How long `start` waits for `/api/health` to answer 200 (default 60 s). */
  healthTimeoutMs?: number;
};

export class NextServer {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  /** How many times the server was started. */
  starts = 0;

  constructor(private readonly opts: NextServerOptions) {}

  /** `http://localhost:<port>` (no trailing slash). */
  get baseUrl(): string {
    return `http://localhost:${this.opts.port}`;
  }

  /** The started process's id, which is also its process group's (it is started detached); null before a start. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** True while the started process has not exited. */
  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Starts the server and waits until `/api/health` answers `{"ok": true}`.
   * @throws Error with the log's tail when it exits first or does not answer in time.
   */
  async start(): Promise<void> {
    if (this.running) throw new Error("the server is already running");
    fs.mkdirSync(path.dirname(this.opts.logFile), { recursive: true });
    const log = fs.openSync(this.opts.logFile, "a");
    fs.writeSync(log, `\n--- start #${this.starts + 1} at ${new Date().toISOString()} ---\n`);
    const start = serverCommand(this.opts.root, this.opts.port);
    const child = spawn(start.command, start.args, {
      cwd: this.opts.root,
      env: this.opts.env,
      stdio: ["ignore", log, log],
      detached: true,
    });
    fs.closeSync(log);
    this.child = child;
    this.starts++;
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    const deadline = Date.now() + (this.opts.healthTimeoutMs ?? 60_000);
    let last = "no answer yet";
    while (Date.now() < deadline) {
      if (!this.running)
        throw new Error(
          `the server exited (code ${child.exitCode}, signal ${child.signalCode}) before it was healthy.\n${this.logTail()}`,
        );
      try {
        const res = await fetch(`${this.baseUrl}/api/health`, { signal: AbortSignal.timeout(5_000) });
        const body = await res.text();
        if (res.status === 200 && (JSON.parse(body) as { ok?: unknown }).ok === true) return;
        last = `${res.status} ${body.slice(0, 200)}`;
      } catch (err) {
        last = err instanceof Error ? err.message : String(err);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
    await this.kill("SIGKILL");
    throw new Error(`${this.baseUrl}/api/health did not answer in time (last: ${last}).\n${this.logTail()}`);
  }

  /** Sends `signal` to the server's whole process group and waits until the server process has exited. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined || !this.running) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
    // Bounded: a test must fail, never hang, if the process does not go.
    await within(this.exited, 20_000, LATE);
  }

  /** Stops the server: SIGTERM, then SIGKILL after 5 s. */
  async stop(): Promise<void> {
    if (!this.running) return;
    const timer = setTimeout(() => void this.kill("SIGKILL"), 5_000);
    await this.kill("SIGTERM");
    clearTimeout(timer);
  }

  /** The last `lines` lines of the log, for failure messages. */
  logTail(lines = 40): string {
    try {
      return fs.readFileSync(this.opts.logFile, "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  }
}
