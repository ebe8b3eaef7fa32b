/**
 * The rules of one custody-map row (docs/concepts.md#custody-maps), as pure functions and the zod schemas the
 * API validates with:
 * - custodians are named parties — a team or service and its organization; names that only look filled
 *   ("shared", "everyone", "TBD", "n/a", blanks, in any case and spacing) are refused with a message that asks
 *   for both sides and the handoff;
 * - custodians from two or more organizations need a handoff description;
 * - verification is `unknown` until evidence is linked; `verified` and `failed` require the link;
 * - a decision of `constrain` names the constraint; `request_evidence` names what is missing and from whom.
 * Every problem carries the field path, so the API answers 422 naming it.
 */
import { z } from "zod";
import {
  DECISIONS,
  EVIDENCE_KINDS,
  VERIFICATIONS,
  type Custodian,
  type Decision,
  type Verification,
  type VerificationEvidence,
} from "@/db/schema/map-vocabulary";
import type { LayerRow } from "@/lib/contract/maps";
import { TASK_ID_PATTERN } from "../events/schema";
import { unsafeTextReason, credentialReason } from "../typed-text";
import { MAP_LAYERS } from "./layers";
import {
  CONSTRAINT_PRESETS,
  compactName,
  isPlaceholderName,
  joinEvidenceRequest,
  NAME_BOTH_SIDES,
  quoted,
  splitEvidenceRequest,
} from "./names";

export {
  CONSTRAINT_PRESETS,
  compactName,
  isPlaceholderName,
  joinEvidenceRequest,
  NAME_BOTH_SIDES,
  splitEvidenceRequest,
};

export type RuleIssue = { path: Array<string | number>; message: string };

/** Limits of the row's text fields (characters). */
export const LIMITS = {
  name: 120,
  organization: 120,
  custodians: 10,
  handoff: 2000,
  longText: 4000,
  decisionNote: 2000,
  evidenceRef: 500,
  evidenceNote: 1000,
} as const;

/** The problems of a custodian list: placeholder names or organizations, duplicates, too many. */
export function custodianIssues(custodians: readonly Custodian[]): RuleIssue[] {
  const issues: RuleIssue[] = [];
  if (custodians.length > LIMITS.custodians) {
    issues.push({
      path: ["custodians"],
      message: `at most ${LIMITS.custodians} custodians per layer; name the accountable parties, not everyone involved`,
    });
  }
  const seen = new Map<string, number>();
  custodians.forEach((c, i) => {
    if (isPlaceholderName(c.name)) {
      issues.push({
        path: ["custodians", i, "name"],
        message: `${quoted(c.name)} is not a custodian: ${NAME_BOTH_SIDES}.`,
      });
    }
    if (isPlaceholderName(c.organization)) {
      issues.push({
        path: ["custodians", i, "organization"],
        message: `${quoted(c.organization)} is not an organization: say which organization ${c.name.trim() ? JSON.stringify(c.name.trim()) : "this custodian"} belongs to; where several organizations hold the layer, ${NAME_BOTH_SIDES}.`,
      });
    }
    const key = `${compactName(c.name)}|${compactName(c.organization)}`;
    const first = seen.get(key);
    if (first !== undefined && compactName(c.name)) {
      issues.push({ path: ["custodians", i], message: `lists the same party as custodians.${first}; remove one` });
    } else {
      seen.set(key, i);
    }
  });
  return issues;
}

/** The distinct organizations of a custodian list, as typed (first spelling wins), placeholders left out. */
export function organizationsOf(custodians: readonly Custodian[]): string[] {
  const byKey = new Map<string, string>();
  for (const c of custodians) {
    const key = compactName(c.organization);
    if (key && !isPlaceholderName(c.organization) && !byKey.has(key)) byKey.set(key, c.organization.trim());
  }
  return [...byKey.values()];
}

/** A handoff is required when the custodians belong to two or more organizations. */
export function handoffIssues(custodians: readonly Custodian[], handoff: string): RuleIssue[] {
  const orgs = organizationsOf(custodians);
  const text = handoff.trim();
  if (orgs.length < 2) {
    if (text && isPlaceholderName(text)) {
      return [
        {
          path: ["handoff"],
          message: `${quoted(text)} does not describe a handoff: say who hands what to whom and how the receiving side checks it, or leave it empty`,
        },
      ];
    }
    return [];
  }
  if (!text || isPlaceholderName(text) || [...text].length < 10) {
    return [
      {
        path: ["handoff"],
        message: `${text ? `${quoted(text)} does not describe the handoff` : "the handoff is missing"}: these custodians belong to different organizations (${orgs.join(", ")}), so ${NAME_BOTH_SIDES} — who hands what to whom, and how the receiving side checks it (at least 10 characters).`,
      },
    ];
  }
  return [];
}

// ------------------------------------------------------------------ verification

export const SHA256_HEX = /^[a-f0-9]{64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An artifact digest as stored: lower-case hex sha256, a `sha256:` prefix removed. */
export function normalizeDigest(value: string): string {
  return value
    .trim()
    .replace(/^sha256:/i, "")
    .toLowerCase();
}

/** Problems of the evidence link's reference for its kind (format only; existence is checked by the verb). */
export function evidenceRefIssues(e: VerificationEvidence): RuleIssue[] {
  const at = ["verification_evidence", "ref"];
  switch (e.kind) {
    case "exercise":
      return UUID.test(e.ref)
        ? []
        : [
            {
              path: at,
              message:
                "an exercise reference is the exercise's id (a UUID), as in its address /maps/{map}/exercises/{id}",
            },
          ];
    case "task":
      return TASK_ID_PATTERN.test(e.ref)
        ? []
        : [{ path: at, message: "a task reference is a task id: 1–200 letters, digits, '.', '_', ':' or '-'" }];
    case "artifact":
      return SHA256_HEX.test(normalizeDigest(e.ref))
        ? []
        : [{ path: at, message: "an artifact reference is its sha256: 64 hex digits (optionally prefixed sha256:)" }];
    case "bundle":
      return SHA256_HEX.test(normalizeDigest(e.ref))
        ? []
        : [
            {
              path: at,
              message:
                "a bundle reference is the bundle's sha256: 64 hex digits, as Settings → Export or an exercise's export step shows it",
            },
          ];
    case "document":
      return [...e.ref.trim()].length >= 3
        ? []
        : [{ path: at, message: "a document reference is a link or a document id (at least 3 characters)" }];
  }
}

/** `verified` and `failed` need a linked piece of evidence. */
export function verificationIssues(verification: Verification, evidence: VerificationEvidence | null): RuleIssue[] {
  const issues: RuleIssue[] = [];
  if (verification !== "unknown" && !evidence) {
    issues.push({
      path: ["verification_evidence"],
      message: `verification can be ${verification} only with evidence linked: an exercise, a task id, an artifact digest or a document reference; until then it stays unknown`,
    });
  }
  if (evidence) issues.push(...evidenceRefIssues(evidence));
  return issues;
}

// ------------------------------------------------------------------ decision

/** `constrain` needs the constraint; `request_evidence` needs what is missing and from whom. */
export function decisionIssues(decision: Decision | null, note: string): RuleIssue[] {
  const text = note.trim();
  if (decision === "constrain") {
    if (!text || isPlaceholderName(text) || [...text].length < 3) {
      return [
        {
          path: ["decision_note"],
          message: `a decision to constrain needs the constraint: e.g. ${CONSTRAINT_PRESETS.map((p) => `"${p.toLowerCase()}"`).join(", ")}, or your own words`,
        },
      ];
    }
  }
  if (decision === "request_evidence") {
    const parts = splitEvidenceRequest(text);
    const example = `e.g. "${joinEvidenceRequest("Revocation window for derived tokens", "Identity team (Acme)")}"`;
    if (!parts || !parts.what || isPlaceholderName(parts.what) || [...parts.what].length < 3) {
      return [
        { path: ["decision_note"], message: `a request for evidence says what is missing and from whom, ${example}` },
      ];
    }
    if (isPlaceholderName(parts.whom)) {
      return [
        {
          path: ["decision_note"],
          message: `${quoted(parts.whom)} is not someone to ask: name the team or service and its organization that owes the evidence, ${example}`,
        },
      ];
    }
  }
  return [];
}

// ------------------------------------------------------------------ the whole row

/** The editable fields of a row (everything but `layer` and `revision`). */
export type LayerFields = Omit<LayerRow, "layer" | "revision">;

/** Every cross-field rule of one row. Field paths are relative to the row. */
export function layerRowIssues(row: LayerFields): RuleIssue[] {
  return [
    ...custodianIssues(row.custodians),
    ...handoffIssues(row.custodians, row.handoff),
    ...verificationIssues(row.verification, row.verification_evidence),
    ...decisionIssues(row.decision, row.decision_note),
  ];
}

// ------------------------------------------------------------------ zod schemas

/** A string field typed by a person: trimmed, at most `max` characters, no control or bidi override characters. */
export function text(field: string, max: number, opts: { multiline?: boolean } = {}) {
  return z
    .string({
      error: (iss) =>
        iss.input === undefined
          ? `${field} is required (text)`
          : `${field} must be text, not ${iss.input === null ? "null" : Array.isArray(iss.input) ? "an array" : typeof iss.input}`,
    })
    .trim()
    .check((ctx) => {
      const n = [...ctx.value].length;
      if (n > max)
        ctx.issues.push({
          code: "custom",
          input: ctx.value,
          message: `${field} is too long (${n} characters); at most ${max} are allowed`,
        });
      const unsafe = unsafeTextReason(ctx.value, opts);
      if (unsafe) ctx.issues.push({ code: "custom", input: ctx.value, message: `${field} ${unsafe}` });
      // Maps and their published versions are kept for good and shown to every role: a credential is refused here.
      const credential = n <= max ? credentialReason(ctx.value) : null;
      if (credential) ctx.issues.push({ code: "custom", input: ctx.value, message: `${field} ${credential}` });
    });
}

export const custodianSchema = z.strictObject({
  name: text("name", LIMITS.name),
  organization: text("organization", LIMITS.organization),
});

export const verificationEvidenceSchema = z
  .strictObject({
    kind: z.enum(EVIDENCE_KINDS, { error: `kind must be one of ${EVIDENCE_KINDS.join(", ")}` }),
    ref: text("ref", LIMITS.evidenceRef),
    note: text("note", LIMITS.evidenceNote, { multiline: true }).optional(),
    // Sent back as read; the server fills in a bundle's result from its own record (decision 0038).
    bundle_verified: z.boolean().nullable().optional(),
  })
  .transform((e): VerificationEvidence => {
    const ref = e.kind === "artifact" || e.kind === "bundle" ? normalizeDigest(e.ref) : e.ref;
    return e.note ? { kind: e.kind, ref, note: e.note } : { kind: e.kind, ref };
  });

const layerEnum = z.enum(MAP_LAYERS, { error: `layer must be one of ${MAP_LAYERS.join(", ")}` });

const fieldSchemas = {
  custodians: z.array(custodianSchema, { error: "custodians must be a list of {name, organization}" }),
  handoff: text("handoff", LIMITS.handoff, { multiline: true }),
  evidence: text("evidence", LIMITS.longText, { multiline: true }),
  recovery_path: text("recovery_path", LIMITS.longText, { multiline: true }),
  acceptance_question: text("acceptance_question", LIMITS.longText, { multiline: true }),
  verification: z.enum(VERIFICATIONS, { error: `verification must be one of ${VERIFICATIONS.join(", ")}` }),
  verification_evidence: verificationEvidenceSchema.nullable(),
  decision: z.enum(DECISIONS, { error: `decision must be null or one of ${DECISIONS.join(", ")}` }).nullable(),
  decision_note: text("decision_note", LIMITS.decisionNote, { multiline: true }),
};

const revisionSchema = z
  .number({
    error: "revision is required: the revision of the row your change is based on (from GET /api/v1/maps/{id})",
  })
  .int("revision must be a whole number")
  .min(1, "revision starts at 1");

/**
 * `PATCH /api/v1/maps/{id}/layers/{layer}` body: any of the row's fields, and the `revision` it was based on.
 * Cross-field rules run on the row as it would be after the change (see {@link layerRowIssues}).
 */
export const layerPatchSchema = z.strictObject({
  layer: layerEnum.optional(),
  custodians: fieldSchemas.custodians.optional(),
  handoff: fieldSchemas.handoff.optional(),
  evidence: fieldSchemas.evidence.optional(),
  recovery_path: fieldSchemas.recovery_path.optional(),
  acceptance_question: fieldSchemas.acceptance_question.optional(),
  verification: fieldSchemas.verification.optional(),
  verification_evidence: fieldSchemas.verification_evidence.optional(),
  decision: fieldSchemas.decision.optional(),
  decision_note: fieldSchemas.decision_note.optional(),
  revision: revisionSchema,
});

/** One complete row (the JSON export's shape), with every rule of {@link layerRowIssues}. */
export const layerRowSchema = z
  .strictObject({ layer: layerEnum, ...fieldSchemas, revision: revisionSchema })
  .superRefine((row, ctx) => {
    for (const issue of layerRowIssues(row)) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  });

/** The JSON export of a map, as `POST /api/v1/maps/import` takes it: eight rows in the fixed order. */
export const mapImportSchema = z
  .strictObject({
    id: z.string().max(100).optional(),
    workflow: text("workflow", 200),
    title: text("title", 200),
    version: z.number().int().min(1).optional(),
    status: z.enum(["draft", "published"]).optional(),
    /** The sign-off a published version's export carries (decision 0046): read, never imported. */
    signoff: z.record(z.string(), z.unknown()).nullable().optional(),
    layers: z.array(layerRowSchema, { error: "layers must be a list of the eight layer rows" }),
  })
  .superRefine((m, ctx) => {
    if (!m.workflow)
      ctx.addIssue({
        code: "custom",
        path: ["workflow"],
        message: "workflow is required: the name of the workflow this map is for",
      });
    if (!m.title) ctx.addIssue({ code: "custom", path: ["title"], message: "title is required" });
    if (m.layers.length !== MAP_LAYERS.length) {
      ctx.addIssue({
        code: "custom",
        path: ["layers"],
        message: `layers must hold exactly ${MAP_LAYERS.length} rows (${MAP_LAYERS.join(", ")}), not ${m.layers.length}`,
      });
      return;
    }
    m.layers.forEach((row, i) => {
      if (row.layer !== MAP_LAYERS[i]) {
        ctx.addIssue({
          code: "custom",
          path: ["layers", i, "layer"],
          message: `row ${i + 1} must be ${MAP_LAYERS[i]} (the eight layers come in a fixed order), not ${row.layer}`,
        });
      }
    });
  });

/** `POST /api/v1/maps` body. */
export const createMapSchema = z.strictObject({
  workflow: text("workflow", 200).refine(
    (v) => v.length > 0,
    "workflow is required: the name of the workflow this map is for, e.g. document-processing",
  ),
  title: text("title", 200).refine((v) => v.length > 0, "title is required, e.g. Custody map for document processing"),
});
