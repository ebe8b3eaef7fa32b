/**
 * Writes an evidence bundle (docs/decisions/0037-evidence-bundles.md) as a streamed `.tar.gz`: tar-stream packs the
 * entries, node:zlib compresses them, and each file's sha256 is computed as it is added. {@link BundleWriter.finish}
 * writes `keys.jwks.json`, `bundle.json` and, last, `attestation.dsse.json`: a DSSE envelope over an in-toto Statement
 * v1 with one subject per file, signed Ed25519 by the server's checkpoint-signing key.
 *
 * Memory stays bounded: a file is held only while it is written (at most {@link BUNDLE_LIMITS}.maxFileBytes), a JSON
 * Lines stream holds at most one part ({@link JSONL_PART_BYTES}), and every entry waits for the reader to take the
 * bytes before the next one is written (the pack stream's backpressure).
 */
import { createHash, sign } from "node:crypto";
import { PassThrough, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import tar from "tar-stream";
import { publicJwk, type PublicJwk, type SigningKey } from "@/lib/domain/crypto/signing";
import {
  ATTESTATION_FILE,
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_VERSION,
  BUNDLE_LIMITS,
  DSSE_PAYLOAD_TYPE,
  dssePae,
  isBundleName,
  JSONL_PART_BYTES,
  jsonlPartName,
  KEYS_FILE,
  MANIFEST_FILE,
  PREDICATE_TYPE,
  STATEMENT_TYPE,
  type BundleManifest,
  type BundleStatement,
  type BundleSubject,
  type DsseEnvelope,
} from "./bundle-format";

export type BundleWriterOptions = {
  /** The key that signs the envelope (the server's checkpoint-signing key). */
  key: SigningKey;
  kind: "task" | "workspace";
  tenantId: string;
  /** The task of a task bundle. */
  taskId?: string;
  /**
   * Public keys `keys.jwks.json` carries besides the signing key's: the keys that signed an imported workspace's
   * checkpoints (decision 0038), so that its re-export verifies.
   */
  extraKeys?: PublicJwk[];
  /** The export's time (ISO 8601); also every entry's mtime. Defaults to now. */
  createdAt?: string;
};

/** One JSON Lines stream of a bundle, written in parts: `write` one record at a time, then `end`. */
export type JsonlSink = {
  /** Appends one record (one JSON line); resolves when it is buffered or its part was written. */
  write(record: unknown): Promise<void>;
  /** Writes the last part (an empty `000001.jsonl` when the stream had no record). */
  end(): Promise<void>;
};

/**
 * A bundle being written. Read {@link BundleWriter.output} (a `.tar.gz` byte stream) while adding files; call
 * {@link BundleWriter.finish} once, or {@link BundleWriter.abort} on failure (the output then errors).
 */
export class BundleWriter {
  /** The `.tar.gz` bytes as they are produced. */
  readonly output: Readable;
  private readonly pack = tar.pack();
  private readonly subjects: BundleSubject[] = [];
  private readonly names = new Set<string>();
  private readonly streams: Record<string, { parts: number; records: number }> = {};
  private readonly mtime: Date;
  private readonly createdAt: string;
  private totalBytes = 0;
  private queue: Promise<void> = Promise.resolve();
  private finished = false;

  constructor(private readonly opts: BundleWriterOptions) {
    this.createdAt = opts.createdAt ?? new Date().toISOString();
    this.mtime = new Date(this.createdAt);
    const out = new PassThrough();
    this.output = out;
    pipeline(this.pack, createGzip(), out).catch((err: unknown) => {
      out.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  }

  /**
   * Adds one file (entries are written in the order of the calls).
   * @throws Error when the name is not a bundle name (decision 0037), is used twice, is a reserved name, or the file or
   *   the bundle would exceed {@link BUNDLE_LIMITS}.
   */
  addFile(name: string, content: string | Uint8Array): Promise<void> {
    if (name === ATTESTATION_FILE || name === MANIFEST_FILE || name === KEYS_FILE) {
      throw new Error(`${name} is written by finish()`);
    }
    return this.enqueue(name, content);
  }

  /** Adds `value` as pretty-printed JSON with a final newline. */
  addJson(name: string, value: unknown): Promise<void> {
    return this.addFile(name, `${JSON.stringify(value, null, 2)}\n`);
  }

  /**
   * Opens JSON Lines stream `stream` (e.g. `events`, `tasks/000001/events`), written as parts
   * `<stream>/000001.jsonl`, … of at most {@link JSONL_PART_BYTES} each; `bundle.json` lists its parts and records.
   */
  jsonl(stream: string): JsonlSink {
    if (this.streams[stream]) throw new Error(`stream ${stream} is already open`);
    const state = { parts: 0, records: 0 };
    this.streams[stream] = state;
    let chunks: string[] = [];
    let size = 0;
    const flush = async () => {
      state.parts++;
      const text = chunks.join("");
      chunks = [];
      size = 0;
      await this.enqueue(jsonlPartName(stream, state.parts), text);
    };
    return {
      write: async (record) => {
        const line = `${JSON.stringify(record)}\n`;
        const bytes = Buffer.byteLength(line);
        if (bytes > JSONL_PART_BYTES) throw new Error(`a record of ${stream} is larger than ${JSONL_PART_BYTES} bytes`);
        if (size + bytes > JSONL_PART_BYTES) await flush();
        chunks.push(line);
        size += bytes;
        state.records++;
      },
      end: async () => {
        if (size > 0 || state.parts === 0) await flush();
      },
    };
  }

  /**
   * Writes `keys.jwks.json` (the signing key's public JWK), `bundle.json` (the manifest, with `extra` merged in) and the
   * signed `attestation.dsse.json`, then ends the archive.
   * @returns the subjects that were signed and the envelope.
   */
  async finish(extra: Record<string, unknown> = {}): Promise<{ subjects: BundleSubject[]; envelope: DsseEnvelope }> {
    if (this.finished) throw new Error("finish() was called twice");
    this.finished = true;
    const { key, kind, tenantId, taskId } = this.opts;
    const own = publicJwk(key);
    const keys = [own, ...(this.opts.extraKeys ?? []).filter((k) => k.kid !== own.kid)];
    await this.enqueue(KEYS_FILE, `${JSON.stringify({ keys }, null, 2)}\n`);
    const manifest: BundleManifest = {
      ...extra,
      format: BUNDLE_FORMAT,
      format_version: BUNDLE_FORMAT_VERSION,
      kind,
      tenant_id: tenantId,
      ...(taskId !== undefined ? { task_id: taskId } : {}),
      created_at: this.createdAt,
      streams: this.streams,
    };
    await this.enqueue(MANIFEST_FILE, `${JSON.stringify(manifest, null, 2)}\n`);
    const statement: BundleStatement = {
      _type: STATEMENT_TYPE,
      subject: this.subjects,
      predicateType: PREDICATE_TYPE,
      predicate: {
        format: BUNDLE_FORMAT,
        format_version: BUNDLE_FORMAT_VERSION,
        kind,
        tenant_id: tenantId,
        ...(taskId !== undefined ? { task_id: taskId } : {}),
        created_at: this.createdAt,
      },
    };
    const payload = Buffer.from(JSON.stringify(statement), "utf8");
    const sig = sign(null, dssePae(DSSE_PAYLOAD_TYPE, payload), key.privateKey);
    const envelope: DsseEnvelope = {
      payloadType: DSSE_PAYLOAD_TYPE,
      payload: payload.toString("base64"),
      signatures: [{ keyid: key.kid, sig: sig.toString("base64") }],
    };
    await this.enqueue(ATTESTATION_FILE, `${JSON.stringify(envelope, null, 2)}\n`, false);
    await this.queue;
    this.pack.finalize();
    return { subjects: this.subjects, envelope };
  }

  /** Stops the bundle: the output stream errors with `err` (a reader sees a truncated archive, never a signed one). */
  abort(err: Error): void {
    this.finished = true;
    this.pack.destroy(err);
  }

  private enqueue(name: string, content: string | Uint8Array, subject = true): Promise<void> {
    if (!isBundleName(name)) throw new Error(`not a bundle file name: ${name}`);
    if (this.names.has(name)) throw new Error(`${name} is already in the bundle`);
    const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
    if (bytes.length > BUNDLE_LIMITS.maxFileBytes) throw new Error(`${name} is larger than the file limit`);
    this.totalBytes += bytes.length;
    if (this.totalBytes > BUNDLE_LIMITS.maxTotalBytes) throw new Error("the bundle is larger than its limit");
    if (this.names.size + 1 > BUNDLE_LIMITS.maxFiles) throw new Error("the bundle has more files than its limit");
    this.names.add(name);
    if (subject) this.subjects.push({ name, digest: { sha256: createHash("sha256").update(bytes).digest("hex") } });
    const write = () =>
      new Promise<void>((resolve, reject) => {
        this.pack.entry({ name, size: bytes.length, mtime: this.mtime, mode: 0o644, type: "file" }, bytes, (err) =>
          err ? reject(err) : resolve(),
        );
      });
    const next = this.queue.then(write);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
