/**
 * PGlite keeps every acknowledged commit when its process is killed with SIGKILL (issue 12 "Crashes", the embedded
 * database of `npm run demo` and of `npm start` without DATABASE_URL; docs/decisions/0011-crash-safety.md).
 *
 * A writer process (tests/support/pglite-writer.ts) opens a data directory as the server does and commits
 * transactions through Drizzle, printing each one once its commit returned. The test kills its process group with
 * SIGKILL at two different points, starting it again on the same directory in between (crash recovery, and the
 * data-directory lock a killed process leaves behind), then checks that every acknowledged commit is there and that
 * every transaction is whole (its row and the running total agree). Bounded by the timeouts below (three PGlite starts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";

const ROOT = process.cwd();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-pglite-crash-"));
const running: ChildProcess[] = [];

afterAll(() => {
  for (const c of running) if (c.exitCode === null && c.signalCode === null && c.pid) process.kill(-c.pid, "SIGKILL");
  fs.rmSync(dir, { recursive: true, force: true });
});

type Writer = { child: ChildProcess; lines: string[]; waitFor: (re: RegExp, timeoutMs: number) => Promise<RegExpMatchArray>; exited: Promise<void> };

function startWriter(mode: "write" | "verify"): Writer {
  const child = spawn(process.execPath, [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "tests/support/pglite-writer.ts", mode, dir], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? os.tmpdir(), TMPDIR: os.tmpdir() },
  });
  running.push(child);
  const lines: string[] = [];
  let waiters: Array<{ re: RegExp; resolve: (m: RegExpMatchArray) => void }> = [];
  let buffered = "";
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      waiters = waiters.filter((w) => {
        const m = line.match(w.re);
        if (m) w.resolve(m);
        return !m;
      });
    }
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const waitFor = (re: RegExp, timeoutMs: number) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const done = lines.map((l) => l.match(re)).find(Boolean);
      if (done) return resolve(done);
      const timer = setTimeout(() => reject(new Error(`no line matching ${re} within ${timeoutMs} ms; output:\n${lines.slice(-20).join("\n")}`)), timeoutMs);
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`the writer exited before a line matching ${re}; output:\n${lines.slice(-20).join("\n")}`));
      });
      waiters.push({
        re,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  return { child, lines, waitFor, exited };
}

/** Kills the writer's process group with SIGKILL; returns the last commit it acknowledged before dying. */
async function kill(w: Writer): Promise<number> {
  process.kill(-w.child.pid!, "SIGKILL");
  await w.exited;
  const acked = w.lines.map((l) => /^acked (\d+)$/.exec(l)).filter((m) => m !== null);
  return Number(acked[acked.length - 1]?.[1] ?? 0);
}

describe("PGlite under SIGKILL", () => {
  test("every acknowledged commit survives two kills mid-write; transactions are whole; the directory opens again", async () => {
    // Kill 1: right as the 25th acknowledgement arrives (the writer is inside the next transaction).
    const first = startWriter("write");
    await first.waitFor(/^ready 0$/, 60_000);
    await first.waitFor(/^acked 25$/, 30_000);
    const acked1 = await kill(first);
    expect(acked1).toBeGreaterThanOrEqual(25);

    // Kill 2: a start on the same directory (recovery, a stale lock) sees every acknowledged commit, then is killed
    // a little later, at another point of its write loop.
    const second = startWriter("write");
    const [, readyAt] = await second.waitFor(/^ready (\d+)$/, 60_000);
    expect(Number(readyAt)).toBeGreaterThanOrEqual(acked1);
    await second.waitFor(new RegExp(`^acked ${Number(readyAt) + 15}$`), 30_000);
    await new Promise((r) => setTimeout(r, 37));
    const acked2 = await kill(second);

    const verify = startWriter("verify");
    const [json] = await verify.waitFor(/^\{.*\}$/, 60_000);
    await verify.exited;
    const state = JSON.parse(json!) as { rows: number; max: number; total: number };
    expect(state.max).toBeGreaterThanOrEqual(acked2);
    // No gaps, and each transaction's two writes both landed or neither did.
    expect(state.rows).toBe(state.max);
    expect(state.total).toBe(state.rows);
  }, 200_000);
});
