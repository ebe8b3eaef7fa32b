/**
 * PGlite keeps every acknowledged commit when its process is killed with SIGKILL (the embedded
 * database of `npm run demo` and of `npm start` without DATABASE_URL; docs/decisions/0011-crash-safety.md).
 *
 * A writer process (tests/support/pglite-writer.ts) opens a data directory as the server does and commits
 * transactions through Drizzle, printing each one once its commit returned. The test kills its process group with
 * SIGKILL at two different points, starting it again on the same directory in between (crash recovery, and the
 * data-directory lock a killed process leaves behind), then checks that every acknowledged commit is there and that
 * every transaction is whole (its row and the running total agree). Bounded by the timeouts below (three PGlite starts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { ChildLines } from "../support/child-lines";

const ROOT = process.cwd();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-pglite-crash-"));
const running: ChildLines[] = [];

afterAll(() => {
  for (const w of running) w.signal("SIGKILL");
  fs.rmSync(dir, { recursive: true, force: true });
});

function startWriter(mode: "write" | "verify"): ChildLines {
  const w = new ChildLines(
    process.execPath,
    [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "tests/support/pglite-writer.ts", mode, dir],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? os.tmpdir(), TMPDIR: os.tmpdir() },
    },
  );
  running.push(w);
  return w;
}

/** Kills the writer's process group with SIGKILL; returns the last commit it acknowledged before dying. */
async function kill(w: ChildLines): Promise<number> {
  await w.kill();
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
    await verify.exit(60_000);
    const state = JSON.parse(json!) as { rows: number; max: number; total: number };
    expect(state.max).toBeGreaterThanOrEqual(acked2);
    // No gaps, and each transaction's two writes both landed or neither did.
    expect(state.rows).toBe(state.max);
    expect(state.total).toBe(state.rows);
  }, 200_000);
});
