/**
 * The portability inventory of a bundle (`inventory.json`, `inventory.md`; docs/decisions/0037-evidence-bundles.md):
 * for each kind of content the file, its format and standard, and what another system would have to re-implement to
 * act on it ("service-specific semantics"); then what the bundle does not hold and where it lives.
 */

export type InventoryRow = {
  content: string;
  file: string;
  format: string;
  standard: string;
  service_specific_semantics: string;
  records?: number;
};

export type Inventory = {
  contents: InventoryRow[];
  not_included: Array<{ content: string; where: string }>;
};

const JSONL = "JSON Lines (one JSON object per line), in parts of ≤ 4 MiB";

/**
 * The inventory of a task bundle.
 * @param counts records per stream, as written.
 * @param runStateSchemaVersions OpenAI Agents SDK RunState schema versions of imports into the task (audit entries).
 */
export function taskInventory(opts: { counts: Record<string, number>; runStateSchemaVersions: string[] }): Inventory {
  const c = opts.counts;
  const runState = opts.runStateSchemaVersions.length
    ? `; records imported from OpenAI Agents SDK RunState schema version ${opts.runStateSchemaVersions.join(", ")}`
    : "";
  return {
    contents: [
      {
        content: "Checkpoint versions (the task record, its digest, Ed25519 signature, key id and place binding)",
        file: "checkpoints/*.jsonl",
        format: JSONL,
        standard: `RFC 8785 canonical JSON, SHA-256, Ed25519 (RFC 8032) with keys as JWK (RFC 8037, kid RFC 7638)${runState}`,
        service_specific_semantics:
          "The record's phases, the resume gate's rules over them, fencing by attempt, and the place binding (tenant, task, version, attempt).",
        records: c.checkpoints,
      },
      {
        content: "Events of the four planes, as stored (secrets redacted at ingest)",
        file: "events/*.jsonl",
        format: JSONL,
        standard: "JSON; attribute names follow OpenTelemetry semantic conventions where one applies (OTLP-mappable)",
        service_specific_semantics: "The event catalogue's types and which of them the gate reads as facts.",
        records: c.events,
      },
      {
        content: "Side effects: intents, leases, receipts, reconcile decisions, last not-applied report",
        file: "side-effects/*.jsonl",
        format: JSONL,
        standard: "JSON; payload digests are SHA-256 of RFC 8785 JSON of {tool, arguments}",
        service_specific_semantics:
          "Leases and their expiry, the status lifecycle (unknown until reconciled), the server's seal over each row.",
        records: c.side_effects,
      },
      {
        content: "Refused receipts kept as evidence",
        file: "refused-receipts/*.jsonl",
        format: JSONL,
        standard: "JSON",
        service_specific_semantics: "Why a receipt did not apply (stale attempt, lease expired, no intent yet…).",
        records: c.refused_receipts,
      },
      {
        content: "Approval requests: bindings, decisions, offered values, stale reasons, supersession",
        file: "approvals/*.jsonl",
        format: JSONL,
        standard: "JSON",
        service_specific_semantics:
          "Approval freshness (what makes an approval stale: payload, agent, tool definition, destination, policy version, amount), single use, separation of duties.",
        records: c.approvals,
      },
      {
        content: "Runtime asks of the resume gate, per attempt",
        file: "gate-asks/*.jsonl",
        format: JSONL,
        standard: "JSON",
        service_specific_semantics: "The gate's verdicts (resume, replay, stop) and the rules that produce them.",
        records: c.gate_asks,
      },
      {
        content: "Artifact manifest (object ref, sha256, media type, size)",
        file: "artifacts/*.jsonl",
        format: JSONL,
        standard: "SHA-256 (FIPS 180-4), media types (RFC 6838)",
        service_specific_semantics: "None: any system can fetch the object and compare its sha256.",
        records: c.artifacts,
      },
      {
        content: "Artifact bytes as uploaded, by sha256, and per digest whether they are included or why not",
        file: "artifact-bytes/<sha256>, artifact-bytes/*.jsonl",
        format: `the bytes as uploaded; ${JSONL}`,
        standard: "SHA-256 (FIPS 180-4): each file hashes to its name",
        service_specific_semantics:
          "Omission reasons: not_uploaded, changed_in_store, larger_than_file_cap (16 MiB), task_cap_reached (256 MiB).",
        records: c.artifact_bytes ?? 0,
      },
      {
        content: "The task's audit entries, the chain links to the head, the head",
        file: "audit/entries/*.jsonl, audit/links/*.jsonl, audit/head.json",
        format: `${JSONL}; JSON`,
        standard: "SHA-256 hash chain: hash = sha256(prev_hash ‖ RFC 8785 JSON of the entry)",
        service_specific_semantics: "The audit vocabulary (action names) and which targets belong to the task.",
        records: c.audit_entries,
      },
      {
        content: "Custody map versions and interruption exercises that link the task",
        file: "custody-maps/*.jsonl, exercises/*.jsonl",
        format: JSONL,
        standard: "JSON",
        service_specific_semantics: "The worksheet's eight layers, verification states and exercise steps.",
        records: (c.custody_map_versions ?? 0) + (c.exercises ?? 0),
      },
      {
        content: "Public signing keys",
        file: "keys.jwks.json",
        format: "JSON",
        standard: "JWK Set (RFC 7517), Ed25519 OKP keys (RFC 8037), kid = RFC 7638 thumbprint",
        service_specific_semantics: "None.",
      },
      {
        content: "Attestation over every file",
        file: "attestation.dsse.json",
        format: "JSON",
        standard: "DSSE v1 envelope, in-toto Statement v1, Ed25519",
        service_specific_semantics: "The predicate type https://run-custody.dev/evidence-bundle/v1 (this format).",
      },
    ],
    not_included: [
      {
        content: "Artifact bytes not uploaded, changed in the store, or over the caps",
        where:
          "The runtime's object store, at each artifact's object ref; artifact-bytes/*.jsonl names each such artifact and why.",
      },
      {
        content: "Secrets and credential values",
        where: "Never kept: redacted before storage; the vault lane holds metadata only.",
      },
      {
        content: "Sandboxes and their file systems",
        where: "Not kept: the runtime's sandbox provider; events record their ids.",
      },
      {
        content: "Other tasks' audit entries",
        where: "This server's audit log; only their chain links (seq and hashes) are included.",
      },
      {
        content: "Policy documents and approval settings",
        where: "This server (Settings); the workspace export carries them.",
      },
    ],
  };
}

/** The inventory as Markdown tables. */
export function inventoryMarkdown(inv: Inventory): string {
  const cell = (s: string | number | undefined) => String(s ?? "").replace(/\|/g, "\\|");
  const lines = [
    "# Portability inventory",
    "",
    "| Content | File | Format | Standard | Service-specific semantics | Records |",
    "|---|---|---|---|---|---|",
    ...inv.contents.map(
      (r) =>
        `| ${cell(r.content)} | ${cell(r.file)} | ${cell(r.format)} | ${cell(r.standard)} | ${cell(r.service_specific_semantics)} | ${cell(r.records)} |`,
    ),
    "",
    "## Not in this bundle",
    "",
    "| Content | Where it lives |",
    "|---|---|",
    ...inv.not_included.map((r) => `| ${cell(r.content)} | ${cell(r.where)} |`),
    "",
  ];
  return lines.join("\n");
}
