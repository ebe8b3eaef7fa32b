/**
 * A child process in its own process group whose output (stdout and stderr) is kept line by line, with waits for a
 * line that quote the output's tail when they time out, and SIGKILL of the whole group. For the crash tests. No test
 * framework imports here.
 */
import { LATE, within } from "./within";
import { spawn, type ChildProcess } from "node:child_process";

export class ChildLines {
  readonly lines: string[] = [];
  readonly exited: Promise<void>;
  private waiters: Array<{ re: RegExp; resolve: (m: RegExpMatchArray) => void }> = [];
  private readonly child: ChildProcess;

  /** Starts `cmd args` in `cwd` with exactly `env`, detached (its own process group). */
  constructor(cmd: string, args: string[], opts: { cwd: string; env: Record<string, string | undefined> }) {
    this.child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        this.onLine(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    };
    this.child.stdout!.on("data", onData);
    this.child.stderr!.on("data", onData);
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private onLine(line: string): void {
    this.lines.push(line);
    this.waiters = this.waiters.filter((w) => {
      const m = line.match(w.re);
      if (m) w.resolve(m);
      return !m;
    });
  }

  /** The last `n` lines, for failure messages. */
  tail(n = 30): string {
    return this.lines.slice(-n).join("\n");
  }

  /**
   * Resolves with the first line (already printed or to come) matching `re`.
   * @throws Error with the output's tail after `timeoutMs`, or when the process exits first.
   */
  waitFor(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const seen = this.lines.map((l) => l.match(re)).find((m) => m !== null);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const fail = (why: string) =>
        reject(new Error(`${why} (waiting for a line matching ${re}); output:\n${this.tail()}`));
      const timer = setTimeout(() => fail(`nothing within ${timeoutMs} ms`), timeoutMs);
      void this.exited.then(() => {
        clearTimeout(timer);
        fail("the process exited");
      });
      this.waiters.push({
        re,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }

  /** Sends `signal` to the whole process group (nothing when it has exited). */
  signal(signal: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      // already gone
    }
  }

  /** SIGKILL to the whole group; resolves once the process has exited. */
  async kill(): Promise<void> {
    this.signal("SIGKILL");
    await this.exit(20_000);
  }

  /** Waits for the process to exit. @throws Error with the output's tail after `timeoutMs`. */
  async exit(timeoutMs: number): Promise<void> {
    if ((await within(this.exited, timeoutMs, LATE)) === LATE)
      throw new Error(`the process did not exit within ${timeoutMs} ms; output:\n${this.tail()}`);
  }
}
