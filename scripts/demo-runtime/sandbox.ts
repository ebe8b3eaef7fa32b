/**
 * The demo's sandboxes and snapshots, on the local file system under `DEMO_WORK_DIR`:
 * - a sandbox is a workspace directory `sandboxes/<environment id>/` (ids `sbx-<random>`: an implementation
 *   pointer, never trusted across attempts);
 * - a snapshot is the workspace's files as one JSON document stored content-addressed at
 *   `snapshots/<sha256>.json`; its digest is the sha256 of those bytes and is re-checked on restore;
 * - the object store `objects/<task>/<name>.<sha256>` keeps artifacts outside any sandbox.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import canonicalize from "canonicalize";
import { sha256Hex } from "./documents";

/** Thrown by work that needs a sandbox which has been lost. */
export class SandboxLostError extends Error {
  constructor(readonly environmentId: string) {
    super(`sandbox ${environmentId} was lost`);
    this.name = "SandboxLostError";
  }
}

/** One sandbox instance (one attempt). */
export class Sandbox {
  private lostFlag = false;

  private constructor(
    readonly environmentId: string,
    readonly dir: string,
    readonly attempt: number,
  ) {}

  /** Creates a fresh, empty workspace for `attempt`. */
  static create(workRoot: string, attempt: number): Sandbox {
    const environmentId = `sbx-${randomBytes(5).toString("hex")}`;
    const dir = path.join(workRoot, "sandboxes", environmentId);
    fs.mkdirSync(dir, { recursive: true });
    return new Sandbox(environmentId, dir, attempt);
  }

  /** True once the sandbox was lost. */
  get lost(): boolean {
    return this.lostFlag;
  }

  /** @throws SandboxLostError when the sandbox is gone. */
  assertAlive(): void {
    if (this.lostFlag) throw new SandboxLostError(this.environmentId);
  }

  /** Absolute path of a workspace file. */
  file(name: string): string {
    return path.join(this.dir, name);
  }

  /** Names of the workspace's files (flat), sorted. */
  files(): string[] {
    if (!fs.existsSync(this.dir)) return [];
    return fs
      .readdirSync(this.dir, { withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => d.name)
      .sort();
  }

  /** The sandbox and its workspace vanish (the host died): later work fails with SandboxLostError. */
  markLost(): void {
    this.lostFlag = true;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** Tears the sandbox down after a finished run. */
  destroy(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export type SnapshotInfo = { digest: string; ref: string; files: string[]; bytes: number };

/** Content-addressed snapshots of sandbox workspaces. */
export class SnapshotStore {
  private readonly dir: string;

  constructor(workRoot: string) {
    this.dir = path.join(workRoot, "snapshots");
  }

  /** Saves the sandbox's files. @returns digest (sha256 of the stored bytes), ref, file names and size. */
  save(sandbox: Sandbox): SnapshotInfo {
    const names = sandbox.files();
    const files: Record<string, string> = {};
    for (const name of names) files[name] = fs.readFileSync(sandbox.file(name)).toString("base64");
    const text = canonicalize({ format: "demo-snapshot/1", files });
    if (text === undefined) throw new Error("snapshot cannot be serialized");
    const digest = sha256Hex(text);
    fs.mkdirSync(this.dir, { recursive: true });
    const target = path.join(this.dir, `${digest}.json`);
    if (!fs.existsSync(target)) {
      const tmp = `${target}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, target);
    }
    return { digest, ref: `demo-store://snapshots/${digest}`, files: names, bytes: Buffer.byteLength(text) };
  }

  /**
   * Restores the snapshot recorded as `digest` into `sandbox`.
   * @returns `null` when the store does not hold it; otherwise the files restored and the digest of the bytes
   *   actually read (different from `digest` when the stored snapshot was altered).
   */
  restore(digest: string, sandbox: Sandbox): { actualDigest: string; files: string[]; ref: string } | null {
    const source = path.join(this.dir, `${digest}.json`);
    if (!/^[a-f0-9]{64}$/.test(digest) || !fs.existsSync(source)) return null;
    const text = fs.readFileSync(source, "utf8");
    const parsed = JSON.parse(text) as { files?: Record<string, string> };
    const names: string[] = [];
    for (const [name, b64] of Object.entries(parsed.files ?? {})) {
      if (name.includes("/") || name.includes("\\") || name.startsWith(".")) continue;
      fs.writeFileSync(sandbox.file(name), Buffer.from(b64, "base64"));
      names.push(name);
    }
    return { actualDigest: sha256Hex(text), files: names.sort(), ref: `demo-store://snapshots/${digest}` };
  }
}

/** Copies an artifact into the object store. @returns its object ref. */
export function storeObject(workRoot: string, taskId: string, name: string, bytes: Buffer, sha256: string): string {
  const dir = path.join(workRoot, "objects", taskId);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${name}.${sha256}`), bytes);
  return `demo-store://${taskId}/${name}`;
}
