/**
 * The demo runtime (`scripts/demo-runtime.ts`) as a child process, for the failure catalogue (Vitest) and the
 * reference-scenario spec (Playwright): its own process group, output kept line by line, waits with timeouts
 * that quote the output's tail. No test framework imports here.
 */
import { LATE, within } from "./within";
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(__dirname, "..", "..");

export class RuntimeProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private waiters: Array<{ re: RegExp; resolve: (line: string) => void }> = [];
  private exitCode: number | null | undefined = undefined;

  private constructor(private readonly child: ChildProcess) {
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        this.onLine(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    this.exited = new Promise((resolve) => {
      child.on("exit", (code) => {
        this.exitCode = code;
        resolve(code);
      });
    });
  }

  /**
   * Starts the runtime with tsx. The environment is `env` plus PATH, HOME, TMPDIR and NODE_ENV only, so the
   * test's own settings (database URLs, secrets) never leak into it. `args` go on the command line
   * (e.g. `--interrupt-at after_intent --task-id …`).
   */
  static start(env: Record<string, string>, args: string[] = []): RuntimeProcess {
    const child = spawn(
      process.execPath,
      [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/demo-runtime.ts", ...args],
      {
        cwd: ROOT,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          NODE_ENV: "test",
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: process.env.HOME ?? os.tmpdir(),
          TMPDIR: os.tmpdir(),
          ...env,
        },
      },
    );
    return new RuntimeProcess(child);
  }

  private onLine(line: string) {
    this.lines.push(line);
    this.waiters = this.waiters.filter((w) => {
      if (!w.re.test(line)) return true;
      w.resolve(line);
      return false;
    });
  }

  /** Resolves with the first output line matching `re`; rejects on timeout or when the process exits first. */
  waitForLine(re: RegExp, timeoutMs: number): Promise<string> {
    const seen = this.lines.find((l) => re.test(l));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no runtime line matched ${re} within ${timeoutMs} ms.\n${this.tail()}`)),
        timeoutMs,
      );
      this.waiters.push({
        re,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
      void this.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`the runtime exited (${code}) before printing ${re}.\n${this.tail()}`));
      });
    });
  }

  /** The exit code, waiting at most `timeoutMs`. @throws Error (with the output's tail) on timeout. */
  async waitForExit(timeoutMs: number): Promise<number | null> {
    const code = await within(this.exited, timeoutMs, LATE);
    if (code === LATE) throw new Error(`the runtime did not exit within ${timeoutMs} ms.\n${this.tail()}`);
    return code;
  }

  /** The last output lines, for failure messages. */
  tail(n = 40): string {
    return this.lines.slice(-n).join("\n");
  }

  /** SIGKILLs the whole process group (tsx and its node child) if it still runs, and waits up to 5 s for it. */
  async kill(): Promise<void> {
    if (this.exitCode !== undefined || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await within(this.exited, 5_000, LATE);
  }
}
