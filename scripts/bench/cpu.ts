/**
 * CPU accounting for benchmarks on a shared machine (Linux /proc): the load generator, the Next server and
 * PostgreSQL share the same cores, so wall-clock figures are read together with the CPU seconds each one
 * spent. Readings are utime + stime in seconds; a process that is gone reads as absent.
 */
import fs from "node:fs";
import os from "node:os";
import type { Sql } from "./harness";

const TICKS = 100; // USER_HZ on Linux

/** CPU seconds (user + system) of one process, or null when it does not exist / no /proc. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // after "pid (comm) ": state(0) ppid(1) … utime(11) stime(12)
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return null;
  }
}

/** Pids of `root` and all of its descendants. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return [root];
  }
  for (const d of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(d));
      children.set(ppid, list);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** CPU seconds of each pid (missing ones omitted). */
export function cpuOf(pids: number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const p of pids) {
    const s = processCpuSeconds(p);
    if (s !== null) m.set(p, s);
  }
  return m;
}

/** Machine-wide busy and total CPU seconds since boot (from /proc/stat), or null. */
export function machineCpuSeconds(): { busy: number; total: number } | null {
  try {
    const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0); // idle + iowait
    return { busy: (total - idle) / TICKS, total: total / TICKS };
  } catch {
    return null;
  }
}

/** PostgreSQL pids to watch: backends connected to this database plus the shared background writers. */
export async function postgresPids(sql: Sql): Promise<{ backends: number[]; background: number[] }> {
  const rows = await sql<{ pid: number; backend_type: string; db: boolean }[]>`
    select pid, backend_type, datname = current_database() as db from pg_stat_activity`;
  return {
    backends: rows.filter((r) => r.db && r.backend_type === "client backend").map((r) => r.pid),
    background: rows
      .filter((r) => ["walwriter", "checkpointer", "background writer", "autovacuum worker"].includes(r.backend_type))
      .map((r) => r.pid),
  };
}

/** A CPU snapshot taken at the start of a measured phase. */
export type CpuMark = {
  self: NodeJS.CpuUsage;
  server: Map<number, number>;
  pgBackends: Map<number, number>;
  pgBackground: Map<number, number>;
  machine: { busy: number; total: number } | null;
  at: number;
};

/** CPU seconds spent during a phase, by party. `other` is everything else on the machine (other users, the kernel). */
export type CpuSpent = {
  wall_s: number;
  load_generator_s: number;
  next_server_s: number | null;
  postgres_backends_s: number | null;
  postgres_background_s: number | null;
  machine_busy_s: number | null;
  other_s: number | null;
  cores: number;
};

/** Snapshot before a phase. `serverPid` may be null (phase without the server). */
export async function markCpu(sql: Sql, serverPid: number | null): Promise<CpuMark> {
  const pg = await postgresPids(sql);
  return {
    self: process.cpuUsage(),
    server: serverPid ? cpuOf(processTree(serverPid)) : new Map(),
    pgBackends: cpuOf(pg.backends),
    pgBackground: cpuOf(pg.background),
    machine: machineCpuSeconds(),
    at: performance.now(),
  };
}

/** Sum over pids of (now − before); a pid that appeared after `before` counts in full. */
function delta(before: Map<number, number>, now: Map<number, number>): number {
  let sum = 0;
  for (const [pid, s] of now) sum += s - (before.get(pid) ?? 0);
  return sum;
}

/**
 * CPU spent since `mark`. Backends that disconnected during the phase are not counted (the pools here
 * keep their connections, so this does not happen in practice).
 */
export async function spentSince(mark: CpuMark, sql: Sql, serverPid: number | null): Promise<CpuSpent> {
  const wall = (performance.now() - mark.at) / 1000;
  const self = process.cpuUsage(mark.self);
  const pg = await postgresPids(sql);
  const server = serverPid ? delta(mark.server, cpuOf(processTree(serverPid))) : null;
  const backends = delta(mark.pgBackends, cpuOf(pg.backends));
  const background = delta(mark.pgBackground, cpuOf(pg.background));
  const machine = machineCpuSeconds();
  const busy = machine && mark.machine ? machine.busy - mark.machine.busy : null;
  const loadGen = (self.user + self.system) / 1e6;
  const ours = loadGen + (server ?? 0) + backends + background;
  return {
    wall_s: round(wall, 3),
    load_generator_s: round(loadGen, 2),
    next_server_s: server === null ? null : round(server, 2),
    postgres_backends_s: round(backends, 2),
    postgres_background_s: round(background, 2),
    machine_busy_s: busy === null ? null : round(busy, 2),
    other_s: busy === null ? null : round(Math.max(0, busy - ours), 2),
    cores: os.cpus().length,
  };
}

/** Rounds to `digits` decimals. */
export function round(x: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
