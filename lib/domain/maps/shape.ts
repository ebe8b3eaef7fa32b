/**
 * Shared pieces of the map verbs: id checks, database rows → the API's JSON shapes, the secret check for typed
 * text, and the view (map + summary + progress + versions) the page and the API answer with.
 */
import type { Db } from "@/db";
import * as q from "@/db/queries/maps";
import type { CustodyMapJson, LayerRow, LayerWork, MapSignoff, MapView } from "@/lib/contract/maps";
import { DomainError, validationError, type ValidationIssue } from "../errors";
import { redactString } from "../events/redact";
import { MAP_LAYERS, isMapLayer, type MapLayer } from "./layers";
import type { LayerFields } from "./rules";
import { adoptionSummary, mapProgress } from "./summary";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids that cannot exist are not looked up (a malformed id is simply not found). @throws DomainError not_found */
export function checkMapId(mapId: string): void {
  if (!UUID.test(mapId)) throw new DomainError("not_found", "That custody map was not found.");
}

/** @throws DomainError not_found */
export function checkExerciseId(exerciseId: string): void {
  if (!UUID.test(exerciseId)) throw new DomainError("not_found", "That exercise was not found.");
}

/** A layer named in a path. @throws DomainError not_found naming the eight layers. */
export function checkLayer(layer: string): MapLayer {
  if (isMapLayer(layer)) return layer;
  const shown = layer.length > 40 ? `${layer.slice(0, 40)}…` : layer;
  throw new DomainError("not_found", `A custody map has no layer "${shown}"; the layers are ${MAP_LAYERS.join(", ")}.`);
}

/** A stored row in the API's shape (exactly the fields of the JSON export). */
export function layerRow(r: q.LayerDbRow): LayerRow {
  return {
    layer: r.layer,
    custodians: r.custodians.map((c) => ({ name: c.name, organization: c.organization })),
    handoff: r.handoff,
    evidence: r.evidence,
    recovery_path: r.recovery_path,
    acceptance_question: r.acceptance_question,
    verification: r.verification,
    verification_evidence: r.verification_evidence
      ? {
          kind: r.verification_evidence.kind,
          ref: r.verification_evidence.ref,
          ...(r.verification_evidence.note ? { note: r.verification_evidence.note } : {}),
          ...(r.verification_evidence.kind === "bundle"
            ? { bundle_verified: r.verification_evidence.bundle_verified ?? null }
            : {}),
        }
      : null,
    decision: r.decision,
    decision_note: r.decision_note,
    revision: r.revision,
  };
}

/** The fields of a row, without layer and revision. */
export function fieldsOf(row: LayerRow): LayerFields {
  const { layer: _layer, revision: _revision, ...fields } = row;
  return fields;
}

/** A map in the JSON export's shape. */
export function mapJson(m: q.MapRow, layers: q.LayerDbRow[]): CustodyMapJson {
  return {
    id: m.id,
    workflow: m.workflow,
    title: m.title,
    version: m.version,
    status: m.status,
    layers: layers.map(layerRow),
  };
}

/** The most comments a map page shows (the newest ones). */
export const MAX_COMMENTS_SHOWN = 400;

/** The sign-off of `version` among a map's versions, when it was published and signed off. */
export function signoffOf(versions: q.VersionRow[], version: number): MapSignoff | undefined {
  const v = versions.find((x) => x.version === version);
  if (!v || !v.signed_off_by || !v.signed_off_at) return undefined;
  return { version: v.version, signed_off_by: v.signed_off_by, signed_off_at: v.signed_off_at, note: v.signoff_note };
}

/**
 * The current map (draft or latest published) with its summary, progress, published versions (with their
 * sign-offs), and per layer its assignee, evidence items and comments. `signoff` is set when the current version is
 * published and signed off.
 */
export async function loadMapView(db: Db, tenantId: string, m: q.MapRow): Promise<MapView> {
  const [layers, versions, items, comments] = await Promise.all([
    q.listLayers(db, tenantId, m.id),
    q.listVersions(db, tenantId, m.id),
    q.listEvidenceItems(db, tenantId, m.id),
    q.listComments(db, tenantId, m.id, MAX_COMMENTS_SHOWN),
  ]);
  const json = mapJson(m, layers);
  const signoff = m.status === "published" ? signoffOf(versions, m.version) : undefined;
  const work = Object.fromEntries(
    layers.map((l) => [
      l.layer,
      {
        assignee: l.assignee,
        evidence_items: items.filter((i) => i.layer === l.layer),
        comments: comments.filter((c) => c.layer === l.layer),
      } satisfies LayerWork,
    ]),
  ) as MapView["work"];
  return {
    ...json,
    ...(signoff ? { signoff } : {}),
    summary: adoptionSummary(json.layers),
    progress: mapProgress(json.layers),
    versions,
    created_by: m.created_by,
    updated_at: m.updated_at,
    last_edited_by: m.last_edited_by,
    archived_at: m.archived_at,
    archived_by: m.archived_by,
    work,
  };
}

export const SECRET_MESSAGE = "looks like a credential value; a custody map keeps references and scopes, never secrets";

/** True when typed text holds something the event redaction rules treat as a secret (a token, a key, a password). */
export function looksLikeSecret(value: string): boolean {
  return redactString(value).kinds.length > 0;
}

/**
 * Text a person typed into a map must not carry a credential: refused (422, naming each field) rather than
 * stored redacted, so what the person sees is what was saved.
 * @param prefix path segments before the row's own (e.g. ["layers", 3] for an import).
 */
export function secretIssues(fields: LayerFields, prefix: Array<string | number> = []): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const check = (path: Array<string | number>, value: string | undefined) => {
    if (value && looksLikeSecret(value)) issues.push({ path: [...prefix, ...path], message: SECRET_MESSAGE });
  };
  fields.custodians.forEach((c, i) => {
    check(["custodians", i, "name"], c.name);
    check(["custodians", i, "organization"], c.organization);
  });
  for (const f of ["handoff", "evidence", "recovery_path", "acceptance_question", "decision_note"] as const)
    check([f], fields[f]);
  check(["verification_evidence", "ref"], fields.verification_evidence?.ref);
  check(["verification_evidence", "note"], fields.verification_evidence?.note);
  return issues;
}

/** Throws the 422 of {@link secretIssues} when there are any. */
export function refuseSecrets(fields: LayerFields, prefix: Array<string | number> = []): void {
  const issues = secretIssues(fields, prefix);
  if (issues.length) throw validationError(issues);
}
