/**
 * The offline verifier of an evidence bundle (docs/decisions/0037-evidence-bundles.md, "Verification"): no server,
 * database or network, and no Node built-in, so the same code runs in `npx run-custody verify` and in the browser.
 * Hashing and Ed25519 go through Web Crypto (`crypto.subtle`, Node ≥ 20 and Chromium/Firefox/Safari), or an injected
 * {@link VerifyCrypto}.
 */
import canonicalizeImpl from "canonicalize";
import {
  ARTIFACT_BYTES_STREAM,
  artifactBytesName,
  ATTESTATION_FILE,
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_VERSION,
  DSSE_PAYLOAD_TYPE,
  dssePae,
  KEYS_FILE,
  MANIFEST_FILE,
  PREDICATE_TYPE,
  STATEMENT_TYPE,
  jsonlPartName,
  type BundleJwk,
} from "./bundle-format";
import { ArchiveError, readBundleArchive, type ArchiveFiles } from "./read-archive";

/** Hashing and signature checks the verifier needs; {@link webCrypto} implements them over `crypto.subtle`. */
export type VerifyCrypto = {
  sha256(data: Uint8Array): Promise<Uint8Array>;
  verifyEd25519(jwk: BundleJwk, message: Uint8Array, signature: Uint8Array): Promise<boolean>;
};

/** {@link VerifyCrypto} over the platform's Web Crypto (`globalThis.crypto.subtle`). */
export function webCrypto(subtle: SubtleCrypto = globalThis.crypto.subtle): VerifyCrypto {
  const keys = new Map<string, Promise<CryptoKey>>();
  return {
    sha256: async (data) => new Uint8Array(await subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>)),
    verifyEd25519: async (jwk, message, signature) => {
      try {
        let key = keys.get(jwk.x);
        if (!key) {
          key = subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: jwk.x }, { name: "Ed25519" }, false, [
            "verify",
          ]);
          keys.set(jwk.x, key);
        }
        return await subtle.verify(
          { name: "Ed25519" },
          await key,
          signature as Uint8Array<ArrayBuffer>,
          message as Uint8Array<ArrayBuffer>,
        );
      } catch {
        return false;
      }
    },
  };
}

/** One line of the report. A failed line names the file, the record (1-based line of a JSON Lines file) and field. */
export type CheckLine = {
  check: string;
  ok: boolean;
  message: string;
  file?: string;
  record?: number;
  field?: string;
};

export type VerifyReport = {
  ok: boolean;
  /** `pinned` when the caller gave the keys; `bundle` when they came from the bundle's own `keys.jwks.json`. */
  key_source: "pinned" | "bundle";
  checks: CheckLine[];
  /** The first line that failed, or null. */
  first_failure: CheckLine | null;
};

export type VerifyOptions = {
  /** A JWK Set (`{keys:[…]}`) obtained earlier from `GET /api/v1/signing-keys`; without it the bundle's own is used. */
  pinnedKeys?: unknown;
  crypto?: VerifyCrypto;
};

/** A failure inside a check: where and what. */
class Fail extends Error {
  constructor(
    message: string,
    readonly file?: string,
    readonly record?: number,
    readonly field?: string,
  ) {
    super(message);
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const enc = new TextEncoder();

function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

function fromBase64(text: string): Uint8Array {
  const std = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(std + "=".repeat((4 - (std.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function canonical(value: unknown): string {
  const out = canonicalizeImpl(value);
  if (typeof out !== "string") throw new Error("no canonical JSON form");
  return out;
}

type Rec = Record<string, unknown>;
const isObj = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);

/** Bundle contents read on demand, parsed once. */
class Bundle {
  constructor(readonly files: ArchiveFiles) {}
  has(name: string): boolean {
    return this.files.has(name);
  }
  text(name: string): string {
    const bytes = this.files.get(name);
    if (!bytes) throw new Fail(`${name} is missing from the bundle.`, name);
    try {
      return utf8.decode(bytes);
    } catch {
      throw new Fail(`${name} is not UTF-8 text.`, name);
    }
  }
  json(name: string): unknown {
    const text = this.text(name);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new Fail(`${name} is not valid JSON.`, name);
    }
  }
  /** Records of a JSON Lines stream across its parts, with their file and line. */
  *records(stream: string, parts: number): Generator<{ file: string; line: number; record: Rec }> {
    for (let p = 1; p <= parts; p++) {
      const file = jsonlPartName(stream, p);
      const lines = this.text(file).split("\n");
      if (lines[lines.length - 1] === "") lines.pop();
      for (let i = 0; i < lines.length; i++) {
        let record: unknown;
        try {
          record = JSON.parse(lines[i]!);
        } catch {
          throw new Fail(`line ${i + 1} is not valid JSON.`, file, i + 1);
        }
        if (!isObj(record)) throw new Fail(`line ${i + 1} is not a JSON object.`, file, i + 1);
        yield { file, line: i + 1, record };
      }
    }
  }
}

type Manifest = {
  kind: "task" | "workspace";
  tenant_id: string;
  task_id?: string;
  created_at: string;
  streams: Record<string, { parts: number; records: number }>;
  tasks?: Array<{ dir: string; task_id: string }>;
};

function readKeySet(value: unknown, file: string): BundleJwk[] {
  if (!isObj(value) || !Array.isArray(value.keys) || value.keys.length === 0) {
    throw new Fail("is not a JWK Set with at least one key.", file, undefined, "keys");
  }
  return value.keys.map((k, i) => {
    if (!isObj(k) || k.kty !== "OKP" || k.crv !== "Ed25519" || typeof k.x !== "string" || typeof k.kid !== "string") {
      throw new Fail(`key ${i + 1} is not an Ed25519 JWK with a kid.`, file, i + 1, "keys");
    }
    return { kty: "OKP", crv: "Ed25519", x: k.x, kid: k.kid };
  });
}

/**
 * Verifies a bundle: archive, keys, envelope, statement, digests, manifest, checkpoints, audit chain, references
 * (decision 0037). Never throws for bad input: a bundle that cannot be read is one failed `archive` line.
 * @param gz the `.tar.gz` bytes or stream.
 * @returns one line per check; `first_failure` names the first that failed (file, record, field).
 */
export async function verifyBundle(
  gz: Uint8Array | ReadableStream<Uint8Array>,
  opts: VerifyOptions = {},
): Promise<VerifyReport> {
  const cr = opts.crypto ?? webCrypto();
  const keySource = opts.pinnedKeys !== undefined ? "pinned" : "bundle";
  const checks: CheckLine[] = [];
  const report = (): VerifyReport => {
    const first = checks.find((c) => !c.ok) ?? null;
    return { ok: !first, key_source: keySource, checks, first_failure: first };
  };
  const run = async (check: string, fn: () => Promise<string> | string): Promise<boolean> => {
    try {
      checks.push({ check, ok: true, message: await fn() });
      return true;
    } catch (err) {
      if (err instanceof Fail) {
        checks.push({ check, ok: false, message: err.message, file: err.file, record: err.record, field: err.field });
      } else {
        checks.push({
          check,
          ok: false,
          message: `could not be checked: ${err instanceof Error ? err.message : String(err)}`,
        });
      }
      return false;
    }
  };

  let files: ArchiveFiles | null = null;
  await run("archive", async () => {
    try {
      files = await readBundleArchive(gz);
    } catch (err) {
      if (err instanceof ArchiveError) throw new Fail(err.message, err.file);
      throw new Fail("The archive could not be read.");
    }
    let bytes = 0;
    for (const f of files.values()) bytes += f.length;
    return `${files.size} files, ${bytes} bytes unpacked; only plain files with safe names`;
  });
  if (!files) return report();
  const b = new Bundle(files);

  let keys: BundleJwk[] = [];
  await run("keys", async () => {
    const bundleKeys = readKeySet(b.json(KEYS_FILE), KEYS_FILE);
    for (const [i, k] of bundleKeys.entries()) {
      const thumb = toBase64Url(await cr.sha256(enc.encode(`{"crv":"Ed25519","kty":"OKP","x":"${k.x}"}`)));
      if (thumb !== k.kid)
        throw new Fail(`key ${i + 1}'s kid is not its RFC 7638 thumbprint.`, KEYS_FILE, i + 1, "kid");
    }
    if (opts.pinnedKeys === undefined) {
      keys = bundleKeys;
      return `${keys.length} key(s) from the bundle itself (${KEYS_FILE}): this proves the bundle is consistent, not who signed it; pin the server's keys with --key`;
    }
    keys = readKeySet(opts.pinnedKeys, "--key");
    for (const [i, k] of bundleKeys.entries()) {
      if (!keys.some((p) => p.kid === k.kid && p.x === k.x)) {
        throw new Fail(`key ${i + 1} (${k.kid}) is not one of the pinned keys.`, KEYS_FILE, i + 1, "kid");
      }
    }
    return `${keys.length} pinned key(s); the bundle's ${KEYS_FILE} matches them`;
  });
  const keyById = (kid: unknown) => keys.find((k) => k.kid === kid);

  let statement: Rec | null = null;
  await run("envelope", async () => {
    const env = b.json(ATTESTATION_FILE);
    if (!isObj(env)) throw new Fail("is not a DSSE envelope.", ATTESTATION_FILE);
    if (env.payloadType !== DSSE_PAYLOAD_TYPE) {
      throw new Fail(`payloadType is not ${DSSE_PAYLOAD_TYPE}.`, ATTESTATION_FILE, undefined, "payloadType");
    }
    if (typeof env.payload !== "string") throw new Fail("has no payload.", ATTESTATION_FILE, undefined, "payload");
    if (!Array.isArray(env.signatures) || !env.signatures.length) {
      throw new Fail("has no signature.", ATTESTATION_FILE, undefined, "signatures");
    }
    let payload: Uint8Array;
    try {
      payload = fromBase64(env.payload);
    } catch {
      throw new Fail("payload is not base64.", ATTESTATION_FILE, undefined, "payload");
    }
    const pae = dssePae(DSSE_PAYLOAD_TYPE, payload);
    let signedBy: string | null = null;
    for (const [i, s] of env.signatures.entries()) {
      if (!isObj(s) || typeof s.sig !== "string") continue;
      const key = keyById(s.keyid);
      if (!key) continue;
      let sig: Uint8Array;
      try {
        sig = fromBase64(s.sig);
      } catch {
        throw new Fail(`signature ${i + 1} is not base64.`, ATTESTATION_FILE, i + 1, "sig");
      }
      if (await cr.verifyEd25519(key, pae, sig)) signedBy = key.kid;
      else throw new Fail(`signature ${i + 1} (key ${key.kid}) does not verify.`, ATTESTATION_FILE, i + 1, "sig");
    }
    if (!signedBy) {
      throw new Fail(
        `no signature is by a key of the ${keySource === "pinned" ? "pinned" : "bundle's"} key set.`,
        ATTESTATION_FILE,
        1,
        "keyid",
      );
    }
    try {
      const parsed = JSON.parse(utf8.decode(payload)) as unknown;
      if (isObj(parsed)) statement = parsed;
    } catch {
      /* reported by the statement check */
    }
    return `DSSE signature by ${signedBy} verifies`;
  });

  let manifest: Manifest | null = null;
  await run("statement", () => {
    const st = statement;
    if (!st) throw new Fail("the payload is not an in-toto Statement.", ATTESTATION_FILE, undefined, "payload");
    if (st._type !== STATEMENT_TYPE)
      throw new Fail(`_type is not ${STATEMENT_TYPE}.`, ATTESTATION_FILE, undefined, "_type");
    if (st.predicateType !== PREDICATE_TYPE) {
      throw new Fail(`predicateType is not ${PREDICATE_TYPE}.`, ATTESTATION_FILE, undefined, "predicateType");
    }
    const m = b.json(MANIFEST_FILE);
    if (!isObj(m) || m.format !== BUNDLE_FORMAT || m.format_version !== BUNDLE_FORMAT_VERSION) {
      throw new Fail(
        `is not a ${BUNDLE_FORMAT} v${BUNDLE_FORMAT_VERSION} manifest.`,
        MANIFEST_FILE,
        undefined,
        "format",
      );
    }
    const pred = isObj(st.predicate) ? st.predicate : {};
    for (const f of ["kind", "tenant_id", "task_id", "created_at"] as const) {
      if (pred[f] !== m[f]) {
        throw new Fail(`${f} differs from the signed statement's predicate.`, MANIFEST_FILE, undefined, f);
      }
    }
    if (!isObj(m.streams)) throw new Fail("has no streams.", MANIFEST_FILE, undefined, "streams");
    manifest = m as unknown as Manifest;
    return `in-toto Statement v1, ${m.kind} bundle of tenant ${m.tenant_id}${m.task_id ? `, task ${m.task_id}` : ""}`;
  });

  await run("digests", async () => {
    const st = statement;
    if (!st || !Array.isArray(st.subject))
      throw new Fail("the statement has no subjects.", ATTESTATION_FILE, undefined, "subject");
    const named = new Set<string>();
    for (const [i, s] of st.subject.entries()) {
      const name = isObj(s) && typeof s.name === "string" ? s.name : null;
      const digest = isObj(s) && isObj(s.digest) ? s.digest.sha256 : null;
      if (!name || typeof digest !== "string") {
        throw new Fail(`subject ${i + 1} has no name or sha256.`, ATTESTATION_FILE, i + 1, "subject");
      }
      if (named.has(name)) throw new Fail(`${name} is listed twice.`, ATTESTATION_FILE, i + 1, "subject");
      named.add(name);
      const bytes = files!.get(name);
      if (!bytes) throw new Fail(`${name} is signed but missing from the archive.`, name, undefined, "sha256");
      if (hex(await cr.sha256(bytes)) !== digest.toLowerCase()) {
        throw new Fail(
          `${name}'s sha256 does not match the signed digest: the file was changed.`,
          name,
          undefined,
          "sha256",
        );
      }
    }
    for (const name of files!.keys()) {
      if (name !== ATTESTATION_FILE && !named.has(name)) {
        throw new Fail(`${name} is in the archive but not in the signed statement: it was added.`, name);
      }
    }
    if (!files!.has(ATTESTATION_FILE)) throw new Fail("is missing.", ATTESTATION_FILE);
    return `${named.size} files match their signed sha256; none missing, none added`;
  });

  const m = manifest as Manifest | null;
  if (!m) return report();
  const scopes: Array<{ prefix: string; taskId: string }> =
    m.kind === "task" && typeof m.task_id === "string"
      ? [{ prefix: "", taskId: m.task_id }]
      : (m.tasks ?? []).map((t) => ({ prefix: `${t.dir}/`, taskId: t.task_id }));

  await run("manifest", () => {
    let records = 0;
    for (const [stream, info] of Object.entries(m.streams)) {
      if (!isObj(info) || !Number.isInteger(info.parts) || !Number.isInteger(info.records) || info.parts < 1) {
        throw new Fail(
          `stream ${stream} has no valid parts/records count.`,
          MANIFEST_FILE,
          undefined,
          `streams.${stream}`,
        );
      }
      if (b.has(jsonlPartName(stream, info.parts + 1))) {
        throw new Fail(`${stream} has more parts than the manifest says.`, jsonlPartName(stream, info.parts + 1));
      }
      let n = 0;
      const scope =
        scopes.find((s) => s.prefix && stream.startsWith(s.prefix)) ?? (m.kind === "task" ? scopes[0] : null);
      for (const { file, line, record } of b.records(stream, info.parts)) {
        n++;
        if (scope && record.task_id !== scope.taskId) {
          throw new Fail(
            `record names task ${JSON.stringify(record.task_id)}, not the bundle's task ${scope.taskId}.`,
            file,
            line,
            "task_id",
          );
        }
      }
      if (n !== info.records) {
        throw new Fail(
          `${stream} holds ${n} records, the manifest says ${info.records}.`,
          MANIFEST_FILE,
          undefined,
          `streams.${stream}`,
        );
      }
      records += n;
    }
    return `${Object.keys(m.streams).length} streams, ${records} records, each of the bundle's task`;
  });

  // A workspace bundle's whole chain is at the top (`audit/…`); a task's own entries, when its folder has them.
  if (m.kind === "workspace" && m.streams["audit/entries"]) {
    await run("audit chain", () => checkAudit(b, m, "", m.tenant_id, cr));
  }
  for (const scope of scopes) {
    const label = scopes.length > 1 || m.kind === "workspace" ? ` (${scope.taskId})` : "";
    await run(`checkpoints${label}`, () => checkCheckpoints(b, m, scope, keyById, cr));
    if (m.kind === "task" || m.streams[`${scope.prefix}audit/entries`]) {
      await run(`audit chain${label}`, () => checkAudit(b, m, scope.prefix, m.tenant_id, cr));
    }
    await run(`references${label}`, () => checkReferences(b, m, scope));
    // Checked whenever bytes are there, listed or not: a manifest that stops listing the stream does not hide its files.
    const bytesPrefix = `${scope.prefix}${ARTIFACT_BYTES_STREAM}`;
    if (m.streams[bytesPrefix] || [...b.files.keys()].some((name) => name.startsWith(bytesPrefix))) {
      await run(`artifact bytes${label}`, () => checkArtifactBytes(b, m, scope, cr));
    }
  }
  return report();
}

function streamRecords(b: Bundle, m: Manifest, stream: string) {
  const info = m.streams[stream];
  if (!info) throw new Fail(`the manifest lists no ${stream} stream.`, MANIFEST_FILE, undefined, "streams");
  return b.records(stream, info.parts);
}

async function checkCheckpoints(
  b: Bundle,
  m: Manifest,
  scope: { prefix: string; taskId: string },
  keyById: (kid: unknown) => BundleJwk | undefined,
  cr: VerifyCrypto,
): Promise<string> {
  let last = 0;
  let count = 0;
  for (const { file, line, record: c } of streamRecords(b, m, `${scope.prefix}checkpoints`)) {
    const version = c.version;
    if (typeof version !== "number" || !Number.isInteger(version) || version <= last) {
      throw new Fail(
        `version ${String(version)} does not follow version ${last}: versions are out of order.`,
        file,
        line,
        "version",
      );
    }
    const key = keyById(c.key_id);
    if (!key) throw new Fail(`key_id ${String(c.key_id)} is not in the key set.`, file, line, "key_id");
    let text: string;
    try {
      text = canonical(c.record);
    } catch {
      throw new Fail("the record has no canonical JSON form.", file, line, "record");
    }
    if (hex(await cr.sha256(enc.encode(text))) !== c.digest) {
      throw new Fail(`version ${version}'s record does not match its digest.`, file, line, "digest");
    }
    if (typeof c.signature !== "string" || !(await cr.verifyEd25519(key, enc.encode(text), fromBase64(c.signature)))) {
      throw new Fail(`version ${version}'s record signature does not verify.`, file, line, "signature");
    }
    const rec = isObj(c.record) ? c.record : {};
    if (rec.task_id !== scope.taskId)
      throw new Fail(`version ${version}'s record names another task.`, file, line, "record.task_id");
    if (c.signature_format === 2) {
      const binding = canonical({
        format: 2,
        tenant_id: m.tenant_id,
        task_id: scope.taskId,
        version,
        attempt: c.attempt ?? null,
        record_digest: c.digest,
      });
      if (
        typeof c.binding_signature !== "string" ||
        !(await cr.verifyEd25519(key, enc.encode(binding), fromBase64(c.binding_signature)))
      ) {
        throw new Fail(
          `version ${version}'s binding (tenant, task, version, attempt) does not verify: the record was signed for another place.`,
          file,
          line,
          "binding_signature",
        );
      }
    } else if (c.signature_format !== 1) {
      throw new Fail(`unknown signature_format ${String(c.signature_format)}.`, file, line, "signature_format");
    }
    last = version;
    count++;
  }
  const task = b.json(`${scope.prefix}task.json`);
  if (!isObj(task) || task.task_id !== scope.taskId) {
    throw new Fail("does not describe the bundle's task.", `${scope.prefix}task.json`, undefined, "task_id");
  }
  if (task.latest_version !== last) {
    throw new Fail(
      `latest_version is ${String(task.latest_version)} but the last checkpoint is version ${last}.`,
      `${scope.prefix}task.json`,
      undefined,
      "latest_version",
    );
  }
  return `${count} checkpoint versions in order, each record, digest${count ? " and binding" : ""} signature verifies`;
}

async function checkAudit(b: Bundle, m: Manifest, prefix: string, tenantId: string, cr: VerifyCrypto): Promise<string> {
  const head = b.json(`${prefix}audit/head.json`);
  const headFile = `${prefix}audit/head.json`;
  if (!isObj(head) || typeof head.seq !== "number" || typeof head.hash !== "string") {
    throw new Fail("is not a chain head {seq, hash}.", headFile);
  }
  const links = new Map<number, { prev_hash: unknown; hash: unknown }>();
  let prevLink: { seq: number; hash: unknown } | null = null;
  const linksStream = `${prefix}audit/links`;
  if (m.streams[linksStream]) {
    for (const { file, line, record: l } of streamRecords(b, m, linksStream)) {
      const seq = l.seq;
      if (typeof seq !== "number") throw new Fail("link has no seq.", file, line, "seq");
      if (prevLink && seq !== prevLink.seq + 1) {
        throw new Fail(`link #${seq} does not follow #${prevLink.seq}: the chain has a gap.`, file, line, "seq");
      }
      if (prevLink && l.prev_hash !== prevLink.hash) {
        throw new Fail(`link #${seq}'s prev_hash is not #${prevLink.seq}'s hash.`, file, line, "prev_hash");
      }
      links.set(seq, { prev_hash: l.prev_hash, hash: l.hash });
      prevLink = { seq, hash: l.hash };
    }
  }
  let entries = 0;
  let lastSeq = 0;
  let lastHash: unknown = null;
  for (const { file, line, record: e } of streamRecords(b, m, `${prefix}audit/entries`)) {
    const seq = e.seq;
    if (typeof seq !== "number" || seq <= lastSeq)
      throw new Fail("entries are not in increasing seq order.", file, line, "seq");
    const content = {
      tenantId,
      seq,
      at: e.at,
      actorKind: e.actor_kind,
      actorId: e.actor_id,
      actorLabel: e.actor_label,
      action: e.action,
      target: e.target,
      details: e.details,
    };
    let text: string;
    try {
      text = canonical(content);
    } catch {
      throw new Fail(`entry #${seq} has no canonical JSON form.`, file, line);
    }
    const expected = hex(await cr.sha256(enc.encode(String(e.prev_hash) + text)));
    if (expected !== e.hash) {
      throw new Fail(
        `entry #${seq}'s hash does not match its content and prev_hash: the entry was altered.`,
        file,
        line,
        "hash",
      );
    }
    if (links.size) {
      const link = links.get(seq);
      if (!link) throw new Fail(`entry #${seq} is not on the chain's links.`, file, line, "seq");
      if (link.hash !== e.hash || link.prev_hash !== e.prev_hash) {
        throw new Fail(`entry #${seq} differs from its link on the chain.`, file, line, "hash");
      }
    } else if (lastSeq && (seq !== lastSeq + 1 || e.prev_hash !== lastHash)) {
      throw new Fail(`entry #${seq} does not link to entry #${lastSeq}.`, file, line, "prev_hash");
    } else if (!lastSeq && (seq !== 1 || e.prev_hash !== "0".repeat(64))) {
      throw new Fail(
        `the chain does not start at entry #1 from the genesis hash (it starts at #${seq}).`,
        file,
        line,
        "seq",
      );
    }
    lastSeq = seq;
    lastHash = e.hash;
    entries++;
  }
  const end = prevLink ?? (entries ? { seq: lastSeq, hash: lastHash } : null);
  if (end && (end.seq !== head.seq || end.hash !== head.hash)) {
    throw new Fail(
      `the chain ends at #${end.seq}, not at the recorded head #${head.seq}.`,
      headFile,
      undefined,
      "hash",
    );
  }
  return `${entries} entries verify and link${links.size ? ` through ${links.size} chain links` : ""} to the head #${head.seq}`;
}

/** Audit actions on a side effect whose target must be in the bundle (as an effect, or a refused receipt's name). */
const EFFECT_ACTIONS = new Set(["side_effect.reconciled", "side_effect.transitioned", "side_effect.receipt_recorded"]);

function checkReferences(b: Bundle, m: Manifest, scope: { prefix: string; taskId: string }): string {
  const p = scope.prefix;
  const effects = new Set<string>();
  const effectRows: Array<{ file: string; line: number; record: Rec }> = [];
  for (const r of streamRecords(b, m, `${p}side-effects`)) {
    effects.add(String(r.record.name));
    effectRows.push(r);
  }
  let refs = 0;
  for (const { file, line, record } of effectRows) {
    if (record.repeats != null) {
      refs++;
      if (!effects.has(String(record.repeats)))
        throw new Fail(`repeats ${String(record.repeats)}, which is not in the bundle.`, file, line, "repeats");
    }
  }
  const approvals = new Set<string>();
  const approvalRows: Array<{ file: string; line: number; record: Rec }> = [];
  for (const r of streamRecords(b, m, `${p}approvals`)) {
    approvals.add(String(r.record.id));
    approvalRows.push(r);
  }
  for (const { file, line, record } of approvalRows) {
    refs++;
    if (!effects.has(String(record.side_effect)) && record.origin === "intent") {
      throw new Fail(
        `approval ${String(record.id)} is for side effect ${String(record.side_effect)}, which is not in the bundle.`,
        file,
        line,
        "side_effect",
      );
    }
    for (const f of ["superseded_by", "supersedes"] as const) {
      if (record[f] != null) {
        refs++;
        if (!approvals.has(String(record[f])))
          throw new Fail(`${f} names approval ${String(record[f])}, which is not in the bundle.`, file, line, f);
      }
    }
  }
  const refusedNames = new Set<string>();
  for (const { file, line, record } of streamRecords(b, m, `${p}refused-receipts`)) {
    refusedNames.add(String(record.name));
    if (record.applied_at != null) {
      refs++;
      if (!effects.has(String(record.name))) {
        throw new Fail(
          `receipt applied to side effect ${String(record.name)}, which is not in the bundle.`,
          file,
          line,
          "name",
        );
      }
    }
  }
  const effectPrefix = `side_effect:${scope.taskId}/`;
  const auditStream = m.streams[`${p}audit/entries`] ? `${p}audit/entries` : "audit/entries";
  for (const { file, line, record } of m.streams[auditStream] ? streamRecords(b, m, auditStream) : []) {
    const target = String(record.target);
    const effect = target.slice(effectPrefix.length);
    // A reconcile or a move of an effect names one that exists; a receipt names an effect or is kept as a refused
    // receipt; an intent's entry may record a refusal of a write that never became an effect.
    if (target.startsWith(effectPrefix) && EFFECT_ACTIONS.has(String(record.action))) {
      refs++;
      if (!effects.has(effect) && !(record.action === "side_effect.receipt_recorded" && refusedNames.has(effect))) {
        throw new Fail(
          `audit entry names side effect ${target.slice(effectPrefix.length)}, which is not in the bundle.`,
          file,
          line,
          "target",
        );
      }
    } else if (target.startsWith("approval:") && (m.kind === "task" || auditStream !== "audit/entries")) {
      refs++;
      if (!approvals.has(target.slice("approval:".length))) {
        throw new Fail(`audit entry names ${target}, which is not in the bundle.`, file, line, "target");
      }
    }
  }
  return `${refs} references from receipts, approvals, decisions and audit entries resolve inside the bundle`;
}

/**
 * Artifact bytes (decision 0050): each `artifact-bytes` record names a digest the artifacts list; an included one's
 * file `artifact-bytes/<sha256>` is there and hashes to that digest (the bytes are the ones the checkpoint named), an
 * omitted one says why and has no file; no file under `artifact-bytes/` lacks its record.
 */
async function checkArtifactBytes(
  b: Bundle,
  m: Manifest,
  scope: { prefix: string; taskId: string },
  cr: VerifyCrypto,
): Promise<string> {
  const p = scope.prefix;
  const listed = new Set<string>();
  for (const { record } of streamRecords(b, m, `${p}artifacts`)) listed.add(String(record.sha256));
  const named = new Set<string>();
  let included = 0;
  let omitted = 0;
  for (const { file, line, record } of streamRecords(b, m, `${p}${ARTIFACT_BYTES_STREAM}`)) {
    const sha = record.sha256;
    if (typeof sha !== "string" || !/^[0-9a-f]{64}$/.test(sha)) {
      throw new Fail("sha256 is not a lower-case hex SHA-256.", file, line, "sha256");
    }
    if (!listed.has(sha)) throw new Fail(`${sha} is not an artifact of the bundle.`, file, line, "sha256");
    const name = `${p}${artifactBytesName(sha)}`;
    named.add(name);
    const bytes = b.files.get(name);
    if (record.included === true) {
      if (!bytes) throw new Fail(`the bytes of ${sha} are said to be included but are missing.`, file, line, "file");
      if (hex(await cr.sha256(bytes)) !== sha) {
        throw new Fail(
          `the bytes of artifact ${sha} do not hash to its digest: they were changed.`,
          name,
          undefined,
          "sha256",
        );
      }
      included++;
    } else {
      if (bytes)
        throw new Fail(`the bytes of ${sha} are in the bundle but said to be omitted.`, file, line, "included");
      if (typeof record.omitted_reason !== "string" || !record.omitted_reason) {
        throw new Fail(`the bytes of ${sha} are omitted without a reason.`, file, line, "omitted_reason");
      }
      omitted++;
    }
  }
  const dir = `${p}${ARTIFACT_BYTES_STREAM}/`;
  for (const name of b.files.keys()) {
    if (name.startsWith(dir) && !name.endsWith(".jsonl") && !named.has(name)) {
      throw new Fail(`${name} has no record in ${ARTIFACT_BYTES_STREAM}.`, name);
    }
  }
  return `${included} artifact(s)' bytes hash to their digests${omitted ? `; ${omitted} omitted, each with its reason` : ""}`;
}

/** The report as text: one line per check, then the first failure (file, record, field) or "verified". */
export function formatReport(r: VerifyReport): string {
  const lines = r.checks.map((c) => `${c.ok ? "ok  " : "FAIL"} ${c.check}: ${c.ok ? c.message : where(c) + c.message}`);
  if (r.key_source === "bundle")
    lines.push("note: the keys came from the bundle itself (pass --key <jwks.json> to pin the server's keys)");
  lines.push(
    r.first_failure
      ? `FIRST FAILURE: ${r.first_failure.check}: ${where(r.first_failure)}${r.first_failure.message}`
      : "VERIFIED",
  );
  return lines.join("\n");
}

function where(c: CheckLine): string {
  const parts = [
    c.file && `file ${c.file}`,
    c.record !== undefined && `record ${c.record}`,
    c.field && `field ${c.field}`,
  ].filter(Boolean);
  return parts.length ? `${parts.join(", ")}: ` : "";
}
