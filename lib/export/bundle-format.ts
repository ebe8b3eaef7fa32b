/**
 * The evidence bundle's format (docs/decisions/0037-evidence-bundles.md): names, limits and the DSSE pre-authentication
 * encoding, shared by the writer (lib/export/bundle-writer.ts, Node) and the verifier (lib/export/verify.ts, Node and
 * the browser). Pure: no Node built-ins, no database, no network.
 */

/** `bundle.json`'s `format`, and the in-toto predicate type of the attestation. */
export const BUNDLE_FORMAT = "run-custody-evidence-bundle";
export const BUNDLE_FORMAT_VERSION = 1;
export const PREDICATE_TYPE = "https://run-custody.dev/evidence-bundle/v1";

/** DSSE payload type of an in-toto Statement, and the Statement's `_type` (in-toto Attestation Framework v1). */
export const DSSE_PAYLOAD_TYPE = "application/vnd.in-toto+json";
export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";

/** Fixed file names. `attestation.dsse.json` is the archive's last entry and the one file that is not a subject. */
export const ATTESTATION_FILE = "attestation.dsse.json";
export const KEYS_FILE = "keys.jwks.json";
export const MANIFEST_FILE = "bundle.json";
export const INVENTORY_JSON_FILE = "inventory.json";
export const INVENTORY_MD_FILE = "inventory.md";

/**
 * Limits a bundle keeps and a verifier enforces (decision 0037): one file at most 16 MiB (a JSON Lines stream is cut
 * into parts of at most {@link JSONL_PART_BYTES}), the whole archive at most 2 GiB unpacked and 100,000 files, a name
 * at most 100 bytes (a plain ustar name: no pax headers).
 */
export const BUNDLE_LIMITS = {
  maxFileBytes: 16 * 1024 * 1024,
  maxTotalBytes: 2 * 1024 * 1024 * 1024,
  maxFiles: 100_000,
  maxNameBytes: 100,
} as const;

/**
 * Artifact bytes in a task bundle (decision 0050): each artifact's uploaded bytes as `artifact-bytes/<sha256>`, and one
 * record per listed digest in the JSON Lines stream `artifact-bytes` (`{task_id, sha256, size_bytes, included, file,
 * omitted_reason}`) that says whether they are in the bundle and, when not, why. At most `maxFileBytes` per artifact
 * (the bundle's file limit) and `maxTaskBytes` per task; the rest are listed as omitted, never cut.
 */
export const ARTIFACT_BYTES_STREAM = "artifact-bytes";
export const ARTIFACT_BYTES_LIMITS = { maxFileBytes: 16 * 1024 * 1024, maxTaskBytes: 256 * 1024 * 1024 } as const;

/** Why an artifact's bytes are not in a bundle. */
export type ArtifactBytesOmission = "not_uploaded" | "changed_in_store" | "larger_than_file_cap" | "task_cap_reached";

/** The file of an artifact's bytes: `artifact-bytes/<sha256>`. */
export function artifactBytesName(sha256: string): string {
  return `${ARTIFACT_BYTES_STREAM}/${sha256}`;
}

/** A JSON Lines stream is written in parts of at most this many bytes (`<stream>/000001.jsonl`, …). */
export const JSONL_PART_BYTES = 4 * 1024 * 1024;

/**
 * A file name a bundle may hold: `/`-separated segments of `[A-Za-z0-9._-]`, none empty, `.` or `..`, not starting
 * with `/`, at most {@link BUNDLE_LIMITS}.maxNameBytes bytes.
 */
export function isBundleName(name: string): boolean {
  if (!name || name.length > BUNDLE_LIMITS.maxNameBytes) return false;
  return name.split("/").every((seg) => /^[A-Za-z0-9._-]+$/.test(seg) && seg !== "." && seg !== "..");
}

/** The name of part `n` (1-based) of JSON Lines stream `stream`: `events` → `events/000001.jsonl`. */
export function jsonlPartName(stream: string, n: number): string {
  return `${stream}/${String(n).padStart(6, "0")}.jsonl`;
}

/** `bundle.json`: what the bundle is of. Every record of a task bundle names the task in `task_id`. */
export type BundleManifest = {
  format: typeof BUNDLE_FORMAT;
  format_version: typeof BUNDLE_FORMAT_VERSION;
  kind: "task" | "workspace";
  tenant_id: string;
  /** The task of a task bundle; absent for a workspace bundle. */
  task_id?: string;
  created_at: string;
  /** The JSON Lines streams of the bundle and how many parts and records each has. */
  streams: Record<string, { parts: number; records: number }>;
  /** Free-form facts of the export (range, counts); not interpreted by the verifier. */
  [k: string]: unknown;
};

/** One subject of the in-toto Statement: a file of the bundle and its sha256 (lower-case hex). */
export type BundleSubject = { name: string; digest: { sha256: string } };

/** The in-toto Statement v1 the envelope carries. */
export type BundleStatement = {
  _type: typeof STATEMENT_TYPE;
  subject: BundleSubject[];
  predicateType: typeof PREDICATE_TYPE;
  predicate: {
    format: typeof BUNDLE_FORMAT;
    format_version: typeof BUNDLE_FORMAT_VERSION;
    kind: "task" | "workspace";
    tenant_id: string;
    task_id?: string;
    created_at: string;
  };
};

/** A DSSE envelope (payload and signatures in standard base64). */
export type DsseEnvelope = {
  payloadType: string;
  payload: string;
  signatures: Array<{ keyid: string; sig: string }>;
};

/** An Ed25519 public key as a JWK (RFC 8037), as in `keys.jwks.json` and `GET /api/v1/signing-keys`. */
export type BundleJwk = { kty: "OKP"; crv: "Ed25519"; x: string; kid: string; alg?: string; use?: string };

const utf8 = new TextEncoder();

/**
 * DSSE v1 pre-authentication encoding: `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths as ASCII
 * decimal byte counts (https://github.com/secure-systems-lab/dsse/blob/master/protocol.md). The bytes Ed25519 signs.
 */
export function dssePae(payloadType: string, payload: Uint8Array): Uint8Array {
  const type = utf8.encode(payloadType);
  const head = utf8.encode(`DSSEv1 ${type.length} ${payloadType} ${payload.length} `);
  const out = new Uint8Array(head.length + payload.length);
  out.set(head, 0);
  out.set(payload, head.length);
  return out;
}
