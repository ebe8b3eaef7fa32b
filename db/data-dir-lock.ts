/**
 * The lock on an embedded (PGlite) data directory: its files must be used by one process at a time.
 */
import path from "node:path";
import fs from "node:fs";

/** The process holding an embedded data directory, or null when it is free (a stale lock does not count). */
export function dataDirLockHolder(dir: string): number | null {
  const file = path.join(/*turbopackIgnore: true*/ dir, "pgdata.lock");
  let pid: number;
  try {
    pid = Number(fs.readFileSync(file, "utf8").trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  // A killed process that nobody has reaped yet (a zombie: its parent was killed too, and PID 1 of a container may
  // never reap it) still answers signal 0, but it holds nothing.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (state === "Z" || state === "X") return null;
  } catch {
    // No /proc (not Linux): signal 0 is all there is.
  }
  return pid;
}

/**
 * Takes the data directory for this process: PGlite's files must be used by one process at a time, and a
 * second writer would silently lose acknowledged writes. Returns the release function.
 * @throws Error naming the process that holds it.
 */
export function lockDataDir(dir: string): () => void {
  const holder = dataDirLockHolder(dir);
  if (holder !== null) {
    throw new Error(
      `The data directory ${dir} is in use by process ${holder} (another \`npm run demo\` or \`npm start\`?). Stop it, or set CUSTODY_DATA_DIR to another directory.`,
    );
  }
  const file = path.join(/*turbopackIgnore: true*/ dir, "pgdata.lock");
  fs.writeFileSync(file, String(process.pid), { mode: 0o600 });
  const release = () => {
    try {
      if (fs.readFileSync(file, "utf8").trim() === String(process.pid)) fs.unlinkSync(file);
    } catch {
      // already gone
    }
  };
  process.once("exit", release);
  return release;
}
