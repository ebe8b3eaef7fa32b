/**
 * Writing small files that must never be seen half-written, even when the process is killed mid-write (SIGKILL,
 * power loss): the embedded server's signing key and session secret, and the demo's secrets. The content goes to a
 * temporary file in the same directory, is flushed to disk, and only then takes the real name — by rename (replace)
 * or by hard link (create only when absent). A reader sees the old file, the new file, or no file; never a torn one.
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";

function writeTemp(file: string, data: string, mode: number): string {
  const tmp = path.join(
    /*turbopackIgnore: true*/ path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`,
  );
  const fd = fs.openSync(tmp, "wx", mode);
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return tmp;
}

/** Flushes the directory entry of `file` (best effort: not every platform can open a directory). */
function syncDir(file: string): void {
  try {
    const fd = fs.openSync(path.dirname(file), "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // not supported here
  }
}

/** Replaces `file` with `data` atomically (mode `mode`, default 0600). */
export function writeFileAtomic(file: string, data: string, mode = 0o600): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = writeTemp(file, data, mode);
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  syncDir(file);
}

/**
 * Creates `file` with `data` unless it exists, atomically (mode `mode`, default 0600).
 * @returns true when this call created it; false when it already existed (its content is left as it is).
 */
export function createFileOnce(file: string, data: string, mode = 0o600): boolean {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = writeTemp(file, data, mode);
  try {
    fs.linkSync(tmp, file);
    syncDir(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
