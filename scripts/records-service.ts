/**
 * The demo's "external system": a tiny records service on loopback that honours `Idempotency-Key`.
 * The demo runtime's `update_record` tool writes to it; the Run Custody server queries its lookup endpoint
 * when a responder reconciles an update whose outcome is unknown.
 *
 * HTTP (JSON):
 * - `PUT /records/{id}` with header `Idempotency-Key` (required: 400 without) and a JSON object body: applies
 *   the update (the body's fields are merged into the record) once per key →
 *   `200 {record_id, operation_id, update_count, applied_at}`. The same key again with the same record and body
 *   returns the stored answer with header `Idempotent-Replayed: true` and applies nothing; the same key with
 *   another record or body → `422 {error: {code: "idempotency_key_mismatch"}}`.
 * - `GET /records/{id}` → `{record_id, data, update_count, updated_at, last_operation_id}` (404 when never
 *   written); `update_count` is how many times the record was really changed.
 * - `GET /lookup?idempotency_key=K` → `{found: true, external_operation_id, result_digest, completed_at,
 *   record_id, applied_count}` or `{found: false}`. `applied_count` is how many times a write under the key really
 *   changed a record (a replay changes nothing, so 1 while the key is honoured). `result_digest` is the sha256 (hex) of the RFC 8785 JSON of the PUT answer,
 *   the same value a runtime computes from the answer it received ({@link resultDigest}).
 * - `GET /health` → `{ok: true}`.
 *
 * State lives in one JSON file (`RECORDS_STATE_FILE`), rewritten atomically (temp file, fsync, rename) before
 * each answer, so a crash never leaves a half-applied update.
 *
 * As a script: `RECORDS_PORT=3001 RECORDS_STATE_FILE=.data/records-service.json npx tsx scripts/records-service.ts`
 * (defaults: port 3001, state file `./records-service.json`); listens on 127.0.0.1 until SIGINT/SIGTERM.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import canonicalize from "canonicalize";

/** Answer of an applied (or replayed) `PUT /records/{id}`. */
export type RecordUpdateResult = {
  record_id: string;
  operation_id: string;
  update_count: number;
  applied_at: string;
};

/** A record as `GET /records/{id}` returns it. */
export type StoredRecord = {
  record_id: string;
  data: Record<string, unknown>;
  update_count: number;
  updated_at: string | null;
  last_operation_id: string | null;
};

/** Answer of `GET /lookup?idempotency_key=…`. */
export type LookupAnswer =
  | {
      found: true;
      external_operation_id: string;
      result_digest: string;
      completed_at: string;
      record_id: string;
      applied_count: number;
    }
  | { found: false };

type Operation = {
  record_id: string;
  request_digest: string;
  response: RecordUpdateResult;
  result_digest: string;
  /** Times a write under this key changed the record (state files written before it was kept: 1). */
  applied_count?: number;
};

type State = { version: 1; records: Record<string, StoredRecord>; operations: Record<string, Operation> };

export type RecordsServiceOptions = {
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** JSON state file (created when missing). */
  stateFile: string;
  /** Listen address (default 127.0.0.1). */
  host?: string;
};

export type RecordsService = {
  /** Base URL, e.g. `http://127.0.0.1:3001`. */
  url: string;
  port: number;
  server: http.Server;
  /** Stops listening and closes open connections. */
  close: () => Promise<void>;
};

const RECORD_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;
const MAX_BODY_BYTES = 64 * 1024;

/** sha256 (hex) of the RFC 8785 canonical JSON of a value. */
export function canonicalSha256(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error("value cannot be canonicalized");
  return createHash("sha256").update(text).digest("hex");
}

/** The `result_digest` of an update: sha256 of the canonical JSON of the `PUT /records/{id}` answer. */
export function resultDigest(result: RecordUpdateResult): string {
  return canonicalSha256(result);
}

function emptyState(): State {
  return { version: 1, records: {}, operations: {} };
}

function loadState(file: string): State {
  if (!fs.existsSync(file)) return emptyState();
  const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<State>;
  return { version: 1, records: parsed.records ?? {}, operations: parsed.operations ?? {} };
}

/** Writes the state to a temp file, flushes it to disk, then renames it over the state file. */
function saveState(file: string, state: State): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const fd = fs.openSync(tmp, "w", 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(state, null, 2));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, "payload_too_large", `The body is larger than ${MAX_BODY_BYTES} bytes.`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * Starts the records service.
 * @returns its URL, port, the node server and `close()`.
 * @throws when the port is taken or the state file is not valid JSON.
 */
export async function startRecordsService(opts: RecordsServiceOptions): Promise<RecordsService> {
  const stateFile = path.resolve(opts.stateFile);
  let state = loadState(stateFile);

  /** Applies one PUT synchronously (no await between reading and writing the state). */
  function applyUpdate(
    recordId: string,
    key: string,
    body: Record<string, unknown>,
  ): { result: RecordUpdateResult; replayed: boolean } {
    const requestDigest = canonicalSha256({ record_id: recordId, body });
    const previous = state.operations[key];
    if (previous) {
      if (previous.request_digest !== requestDigest) {
        throw new HttpError(
          422,
          "idempotency_key_mismatch",
          `Idempotency-Key "${key}" was already used for a different request (record ${previous.record_id}).`,
        );
      }
      return { result: previous.response, replayed: true };
    }
    const now = new Date().toISOString();
    const current = state.records[recordId];
    const record: StoredRecord = {
      record_id: recordId,
      data: { ...(current?.data ?? {}), ...body },
      update_count: (current?.update_count ?? 0) + 1,
      updated_at: now,
      last_operation_id: null,
    };
    const result: RecordUpdateResult = {
      record_id: recordId,
      operation_id: `op-${randomBytes(8).toString("hex")}`,
      update_count: record.update_count,
      applied_at: now,
    };
    record.last_operation_id = result.operation_id;
    const next: State = {
      version: 1,
      records: { ...state.records, [recordId]: record },
      operations: {
        ...state.operations,
        [key]: {
          record_id: recordId,
          request_digest: requestDigest,
          response: result,
          result_digest: resultDigest(result),
          applied_count: 1,
        },
      },
    };
    saveState(stateFile, next);
    state = next;
    return { result, replayed: false };
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://records.local");
    const method = req.method ?? "GET";
    if (url.pathname === "/health" && method === "GET") return send(res, 200, { ok: true });

    if (url.pathname === "/lookup" && method === "GET") {
      const key = url.searchParams.get("idempotency_key");
      if (!key) throw new HttpError(400, "missing_idempotency_key", "Query parameter idempotency_key is required.");
      const op = state.operations[key];
      const answer: LookupAnswer = op
        ? {
            found: true,
            external_operation_id: op.response.operation_id,
            result_digest: op.result_digest,
            completed_at: op.response.applied_at,
            record_id: op.record_id,
            applied_count: op.applied_count ?? 1,
          }
        : { found: false };
      return send(res, 200, answer);
    }

    const match = /^\/records\/([^/]+)$/.exec(url.pathname);
    if (match) {
      const recordId = decodeURIComponent(match[1]!);
      if (!RECORD_ID.test(recordId)) {
        throw new HttpError(400, "invalid_record_id", "Record ids are 1–100 letters, digits, '.', '_' or '-'.");
      }
      if (method === "GET") {
        const record = state.records[recordId];
        if (!record) throw new HttpError(404, "not_found", `No record ${recordId}.`);
        return send(res, 200, record);
      }
      if (method === "PUT") {
        const key = req.headers["idempotency-key"];
        if (typeof key !== "string" || !key) {
          throw new HttpError(400, "missing_idempotency_key", "Header Idempotency-Key is required for PUT.");
        }
        if (!IDEMPOTENCY_KEY.test(key)) {
          throw new HttpError(400, "invalid_idempotency_key", "Idempotency-Key must be 1–200 printable characters.");
        }
        const text = await readBody(req);
        let body: unknown;
        try {
          body = JSON.parse(text) as unknown;
        } catch {
          throw new HttpError(400, "invalid_json", "The body must be a JSON object.");
        }
        if (!body || typeof body !== "object" || Array.isArray(body)) {
          throw new HttpError(400, "invalid_json", "The body must be a JSON object.");
        }
        const { result, replayed } = applyUpdate(recordId, key, body as Record<string, unknown>);
        return send(res, 200, result, replayed ? { "Idempotent-Replayed": "true" } : {});
      }
      throw new HttpError(405, "method_not_allowed", `${method} is not allowed on ${url.pathname}.`);
    }
    throw new HttpError(404, "not_found", `No route ${method} ${url.pathname}.`);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return;
      if (err instanceof HttpError) return send(res, err.status, { error: { code: err.code, message: err.message } });
      console.error("[records] unexpected error:", err instanceof Error ? err.message : String(err));
      send(res, 500, { error: { code: "internal", message: "The records service failed." } });
    });
  });
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function main() {
  const port = Number(process.env.RECORDS_PORT || 3001);
  const stateFile = process.env.RECORDS_STATE_FILE || path.resolve("records-service.json");
  const service = await startRecordsService({ port, stateFile });
  console.log(`[records] listening on ${service.url} (state: ${stateFile})`);
  const stop = () => {
    service.close().finally(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (typeof require !== "undefined" && typeof module !== "undefined" && require.main === module) {
  main().catch((err: unknown) => {
    console.error("[records] failed to start:", err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
