/**
 * scripts/lib/exit-with-parent.cjs: a process `npm run demo` started stops by itself once the demo is killed outright
 * (SIGKILL), so the data directory and the ports are free for the next start (docs/decisions/0011-crash-safety.md).
 * A parent process starts two children in process groups of their own, as the demo does — one with the watchdog
 * preloaded, one without — and is then killed with SIGKILL.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, expect, test } from "vitest";

const PRELOAD = path.resolve(__dirname, "..", "..", "scripts", "lib", "exit-with-parent.cjs");
const leftovers: number[] = [];

afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

/** True while `pid` runs; a zombie (exited, not reaped where no init reaps orphans) counts as gone. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return true;
  }
}

/** The parent: starts both children detached, prints their ids as JSON, then idles until killed. */
const PARENT = `
const { spawn } = require("node:child_process");
const idle = ["-e", "process.on('SIGTERM', () => { console.log('stopping'); process.exit(0); }); setInterval(() => {}, 1000);"];
const opts = (env) => ({ detached: true, stdio: "ignore", env: { ...process.env, ...env } });
const watched = spawn(process.execPath, idle, opts({ CUSTODY_EXIT_WITH_PID: String(process.pid), NODE_OPTIONS: "--require " + JSON.stringify(process.argv[1]) }));
const plain = spawn(process.execPath, idle, opts({}));
console.log(JSON.stringify({ watched: watched.pid, plain: plain.pid }));
setInterval(() => {}, 1000);
`;

test("a child with the watchdog stops within seconds of its parent's SIGKILL; one without keeps running", async () => {
  const parent = spawn(process.execPath, ["-e", PARENT, PRELOAD], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    parent.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n")) resolve(out.split("\n")[0]!);
    });
    parent.once("exit", () => reject(new Error("the parent exited early")));
  });
  const { watched, plain } = JSON.parse(line) as { watched: number; plain: number };
  leftovers.push(watched, plain);
  await new Promise((r) => setTimeout(r, 700));
  expect(alive(watched)).toBe(true); // the watchdog leaves a child alone while its parent lives

  parent.kill("SIGKILL");
  const deadline = Date.now() + 5_000;
  while (alive(watched) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(alive(watched)).toBe(false);
  expect(alive(plain)).toBe(true); // without the watchdog, the orphan would hold the data directory and ports
}, 10_000);
