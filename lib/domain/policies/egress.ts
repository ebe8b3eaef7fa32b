/**
 * Egress custody (docs/concepts.md#egress-and-vault-custody; planes `tools` and `vault`): per host a task reached, how
 * many requests the egress proxy allowed and denied, under which policy versions, for which tools and credential
 * references, and whether the current policy still allows the host ("drift": the run reached a host the current policy
 * no longer admits). The gate reads the same facts ({@link policyGateFacts}): drift, or a current policy that fails
 * lint, answers `egress_policy_inconsistent`.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { GateReason } from "@/lib/contract/api";
import { isoUtc } from "@/db/queries/sql-helpers";
import { authorize } from "../authz";
import { notFound } from "../errors";
import { durationSeconds, type PolicyDocument, type PolicyFinding } from "./document";
import { lintPolicy } from "./lint";
import { currentPolicyRow } from "./current";
import { policyAllowsHost } from "./hosts";
import type { VerbContext } from "../context";
import { policyVersionName } from "./version-name";

/** One request the egress proxy reported (`egress.allowed` / `egress.denied`). */
export type EgressRequest = {
  event_id: string;
  occurred_at: string;
  outcome: "allowed" | "denied";
  method: string | null;
  path: string | null;
  tool: string | null;
  credential_ref: string | null;
  attempt: number | null;
};

/** Requests listed per host (newest first); `allowed` and `denied` say how many there are in all. */
export const EGRESS_REQUESTS_LISTED = 20;

/** One host a task's runs asked to reach. `in_current_policy` is null when no policy is active. */
export type EgressHost = {
  host: string;
  /** Requests allowed and denied: together the length of `requests` unless more than are listed. */
  allowed: number;
  denied: number;
  /** The newest {@link EGRESS_REQUESTS_LISTED} requests, newest first: the rows the counts count. */
  requests: EgressRequest[];
  last_at: string;
  ports: number[];
  policy_versions: string[];
  tools: string[];
  credential_refs: string[];
  in_current_policy: boolean | null;
  /** Allowed before, but the current policy does not admit it. */
  drift: boolean;
};

export type EgressSummary = { current_policy_version: number | null; hosts: EgressHost[] };

type Row = {
  host: string;
  type: string;
  n: string | number;
  last_at: string;
  ports: Array<string | null> | null;
  policy_versions: Array<string | null> | null;
  tools: Array<string | null> | null;
  credential_refs: Array<string | null> | null;
};

type PolicyRow = Awaited<ReturnType<typeof currentPolicyRow>>;

/**
 * The egress facts of one task, per host (no authorization: callers check it). At most 500 hosts.
 * @param preloaded the tenant's current policy row when the caller already read it.
 */
export async function egressFacts(
  db: Db,
  tenantId: string,
  taskId: string,
  preloaded?: PolicyRow,
): Promise<EgressSummary> {
  const [rows, current, requestRows] = await Promise.all([
    queryRows<Row>(
      db,
      sql`select lower(attrs ->> 'host') as host, type, count(*) as n, ${isoUtc("max(occurred_at)")} as last_at,
                 array_remove(array_agg(distinct attrs ->> 'port'), null) as ports,
                 array_remove(array_agg(distinct attrs ->> 'policy_version'), null) as policy_versions,
                 array_remove(array_agg(distinct attrs ->> 'tool'), null) as tools,
                 array_remove(array_agg(distinct attrs ->> 'credential_ref'), null) as credential_refs
          from events
          where tenant_id = ${tenantId} and task_id = ${taskId} and retention_class = 'fact'
            and type in ('egress.allowed', 'egress.denied')
            and (attrs ->> 'host') is not null
          group by 1, 2
          order by 1
          limit 1000`,
    ),
    preloaded !== undefined ? Promise.resolve(preloaded) : currentPolicyRow(db, tenantId),
    queryRows<Omit<EgressRequest, "outcome"> & { host: string; type: string }>(
      db,
      sql`select host, type, event_id, occurred_at, method, path, tool, credential_ref, attempt from (
            select lower(attrs ->> 'host') as host, type, event_id, ${isoUtc("occurred_at")} as occurred_at,
                   attrs ->> 'method' as method, attrs ->> 'path' as path, attrs ->> 'tool' as tool,
                   attrs ->> 'credential_ref' as credential_ref, attempt,
                   row_number() over (partition by lower(attrs ->> 'host') order by occurred_at desc, seq desc) as n
            from events
            where tenant_id = ${tenantId} and task_id = ${taskId} and retention_class = 'fact'
            and type in ('egress.allowed', 'egress.denied')
              and (attrs ->> 'host') is not null
          ) r
          where n <= ${EGRESS_REQUESTS_LISTED}
          order by host, n
          limit 10000`,
    ),
  ]);
  const requestsByHost = new Map<string, EgressRequest[]>();
  for (const { host, type, ...r } of requestRows) {
    const list = requestsByHost.get(host) ?? [];
    list.push({
      ...r,
      outcome: type === "egress.allowed" ? "allowed" : "denied",
      attempt: r.attempt === null ? null : Number(r.attempt),
    });
    requestsByHost.set(host, list);
  }
  const doc = current?.document ?? null;
  const byHost = new Map<string, EgressHost>();
  const clean = (xs: Array<string | null> | null) =>
    (xs ?? []).filter((x): x is string => typeof x === "string" && x.length > 0);
  for (const r of rows) {
    const h =
      byHost.get(r.host) ??
      ({
        host: r.host,
        allowed: 0,
        denied: 0,
        requests: requestsByHost.get(r.host) ?? [],
        last_at: r.last_at,
        ports: [],
        policy_versions: [],
        tools: [],
        credential_refs: [],
        in_current_policy: null,
        drift: false,
      } as EgressHost);
    if (r.type === "egress.allowed") h.allowed += Number(r.n);
    else h.denied += Number(r.n);
    if (r.last_at > h.last_at) h.last_at = r.last_at;
    h.ports = [...new Set([...h.ports, ...clean(r.ports).map(Number).filter(Number.isInteger)])].sort((a, b) => a - b);
    h.policy_versions = [...new Set([...h.policy_versions, ...clean(r.policy_versions)])].sort();
    h.tools = [...new Set([...h.tools, ...clean(r.tools)])].sort();
    h.credential_refs = [...new Set([...h.credential_refs, ...clean(r.credential_refs)])].sort();
    byHost.set(r.host, h);
  }
  const hosts = [...byHost.values()].slice(0, 500);
  for (const h of hosts) {
    h.in_current_policy = doc ? policyAllowsHost(doc, h.host) : null;
    h.drift = h.allowed > 0 && h.in_current_policy === false;
  }
  return { current_policy_version: current?.version ?? null, hosts };
}

/**
 * `GET /api/v1/tasks/{taskId}/egress`: {@link egressFacts} for a reader of the task.
 * @throws DomainError forbidden, not_found (no such task in the tenant).
 */
export async function taskEgress({ db, actor }: VerbContext, { taskId }: { taskId: string }): Promise<EgressSummary> {
  authorize(actor, "tasks.read");
  const exists = await queryRows<{ one: number }>(
    db,
    sql`select 1 as one from tasks where tenant_id = ${actor.tenantId} and task_id = ${taskId}`,
  );
  if (!exists.length) throw notFound(`Task ${taskId}`);
  return egressFacts(db, actor.tenantId, taskId);
}

/** A current policy version as the gate reads it: its document (null when it cannot be read) and lint errors. */
export type GatePolicy = { version: number; digest: string; document: PolicyDocument | null; errors: PolicyFinding[] };

/**
 * Documents of policy versions with their lint errors, per process, by tenant, version and digest: stored versions
 * are immutable, and another document under the same version would carry another digest. Bounded; oldest out first.
 */
const policyDocuments = new Map<string, { document: PolicyDocument | null; errors: PolicyFinding[] }>();
const POLICY_DOCUMENTS_MAX = 500;

/**
 * The document of one stored policy version and its lint errors, read and linted once per process.
 * @param ref the version and its digest, as the caller read them with the current-policy facts.
 */
export async function policyDocumentCached(
  db: Db,
  tenantId: string,
  ref: { version: number; digest: string },
): Promise<{ document: PolicyDocument | null; errors: PolicyFinding[] }> {
  const id = `${tenantId}\u0000${ref.version}\u0000${ref.digest}`;
  const known = policyDocuments.get(id);
  if (known) return known;
  const [row] = await queryRows<{ document: PolicyDocument | null; digest: string }>(
    db,
    sql`select document, digest from policy_versions where tenant_id = ${tenantId} and version = ${ref.version}`,
  );
  const document = row && row.digest === ref.digest ? row.document : null;
  const found = { document, errors: document ? lintPolicy(document).filter((f) => f.severity === "error") : [] };
  if (row && row.digest === ref.digest) {
    if (policyDocuments.size >= POLICY_DOCUMENTS_MAX) policyDocuments.delete(policyDocuments.keys().next().value!);
    policyDocuments.set(id, found);
  }
  return found;
}

/** The current policy's credentials as the gate judges them (`credential_revoked` / `credential_expired`). */
export type CredentialPolicy = {
  version: number;
  credentials: Array<{ name: string; ttl_seconds: number | null; ttl: string | null }>;
};

/**
 * The gate's policy facts for a task (pure, over what the gate's facts statement read): `egress_policy_inconsistent`
 * when the current policy fails lint (or its document cannot be read), and when the run was allowed to reach a host the
 * current policy does not admit (drift, as {@link egressFacts} marks it); and the current policy's credentials with
 * their ttl, for the gate's credential rules (lib/domain/gate/evaluate.ts). No credential policy when the current
 * document cannot be read.
 * @param reachedHosts hosts the task's runs were allowed to reach (`egress.allowed`), lower case.
 */
export function policyGateFactsFor(
  taskId: string,
  current: GatePolicy,
  reachedHosts: string[],
): { reasons: GateReason[]; credential_policy: CredentialPolicy | null } {
  const reasons: GateReason[] = [];
  const doc = current.document;
  const errors = current.errors;
  if (!doc || errors.length) {
    reasons.push({
      code: "egress_policy_inconsistent",
      message: `The current policy ${policyVersionName(current.version)} fails lint (${errors[0] ? `${errors[0].path}: ${errors[0].message}` : "its document cannot be read"}); no run may act under it until a corrected version is activated.`,
      target: `/policies?v=${current.version}`,
    });
  }
  const drifted = doc ? [...new Set(reachedHosts)].filter((h) => !policyAllowsHost(doc, h)).sort() : [];
  if (drifted.length) {
    const names = drifted.slice(0, 5).join(", ");
    reasons.push({
      code: "egress_policy_inconsistent",
      message: `This run reached ${drifted.length === 1 ? "a host" : `${drifted.length} hosts`} the current policy ${policyVersionName(current.version)} does not admit (${names}${drifted.length > 5 ? ", …" : ""}); resuming would act on authority the policy has withdrawn. Review the egress evidence, then allow the host in a new policy version or stop the run.`,
      target: `/tasks/${encodeURIComponent(taskId)}?tab=egress`,
    });
  }
  const credential_policy: CredentialPolicy | null = doc
    ? {
        version: current.version,
        credentials: doc.credentials.map((c) => ({
          name: c.name,
          ttl_seconds: c.ttl === undefined ? null : durationSeconds(c.ttl),
          ttl: c.ttl === undefined ? null : typeof c.ttl === "number" ? `${c.ttl}s` : c.ttl,
        })),
      }
    : null;
  return { reasons, credential_policy };
}
