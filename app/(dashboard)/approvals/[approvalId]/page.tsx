import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { separationOfDuties } from "@/lib/domain/approvals/decide";
import { STALE_REASON_TEXT } from "@/lib/domain/approvals/freshness";
import { getApproval } from "@/lib/domain/approvals/read";
import { artifactsNamedBy } from "@/lib/domain/artifacts/named";
import { getArtifacts } from "@/lib/domain/tasks/read";
import { can } from "@/lib/domain/authz";
import { isDomainError } from "@/lib/domain/errors";
import { jsonDiff } from "@/lib/domain/json/diff";
import { requirePageContext } from "@/lib/server/page-actor";
import { ApprovalStatusBadge } from "@/components/approvals/ApprovalStatusBadge";
import { ArtifactViewer } from "@/components/artifacts/ArtifactViewer";
import { Id } from "@/components/ui/Id";
import { Time } from "@/components/ui/time";
import { DecisionPanel } from "./DecisionPanel";
import { policyVersionName, policyVersionNumber } from "@/lib/domain/policies/version-name";

export const metadata: Metadata = { title: "Approval" };

const FIELD_LABEL: Record<string, string> = {
  policy_version: "Policy version",
  input_digest: "Input digest",
  payload_digest: "Payload digest",
  agent: "Agent",
  agent_version: "Agent version",
  principal: "Principal",
  expires_at: "Expires",
};

/**
 * One approval (docs/concepts.md#approvals, #freshness): the payload, the bound fields, the artifact the write
 * publishes (when the payload names one of the task's artifacts, decision 0045), and for a stale approval the old and
 * new values side by side (policy version with a link to the field-level diff of the two versions, input digest, agent
 * version, payload as a JSON diff), with Approve / Re-approve and Reject.
 */
export default async function ApprovalPage({ params }: { params: Promise<{ approvalId: string }> }) {
  const ctx = await requirePageContext();
  const { actor } = ctx;
  const { approvalId } = await params;
  let a;
  try {
    a = await getApproval(ctx, { approvalId });
  } catch (err) {
    if (isDomainError(err) && err.code === "not_found") notFound();
    throw err;
  }
  const mayDecide = can(actor, "approvals.decide");
  const sod = separationOfDuties(a, actor, a.self_approval_allowed);
  const open = (a.status === "pending" || a.status === "stale") && !a.used_at && !a.superseded_by;
  const payloadChanges = a.offered_payload !== null && a.payload !== null ? jsonDiff(a.payload, a.offered_payload) : [];
  // The artifact(s) the write publishes: the task's artifacts its payload names (the payload offered now, if any).
  const published = artifactsNamedBy(
    a.offered_payload ?? a.payload,
    await getArtifacts(ctx, { taskId: a.task_id }).catch(() => []),
  );
  const policyChange = a.changes.find((c) => c.field === "policy_version");
  const policyFrom = policyVersionNumber(policyChange?.approved ?? null);
  const policyTo = policyVersionNumber(policyChange?.current ?? null);
  const bound: Array<[string, React.ReactNode]> = [
    [
      "Task",
      <Link key="t" href={`/tasks/${encodeURIComponent(a.task_id)}?tab=approvals`} className="underline">
        <Id value={a.task_id} inline />
      </Link>,
    ],
    [
      "Side effect",
      <code key="s" className="font-mono text-xs">
        {a.side_effect}
      </code>,
    ],
    [
      "Action",
      <code key="a" className="font-mono text-xs">
        {a.action}
      </code>,
    ],
    [
      "Tool",
      <code key="tool" className="font-mono text-xs">
        {a.tool}
      </code>,
    ],
    ["Principal", a.principal ?? "—"],
    ["Idempotency key", <Id key="k" value={a.idempotency_key} inline className="text-xs" />],
    [
      "Payload digest",
      a.payload_digest ? (
        <Id key="p" value={a.payload_digest} inline className="text-xs" data-testid="bound-payload-digest" />
      ) : (
        "not known yet (the runtime's intent binds it)"
      ),
    ],
    ["Input digest", <Id key="i" value={a.input_digest} inline className="text-xs" />],
    [
      "Policy version",
      <span key="pv" data-testid="bound-policy-version">
        {policyVersionName(a.policy_version)}
      </span>,
    ],
    ["Agent", `${a.agent ?? "—"}${a.agent_version ? ` @ ${a.agent_version}` : ""}`],
    [
      "Requested",
      <span key="r">
        <Time iso={a.requested_at} /> by {a.requested_by} ({a.origin})
      </span>,
    ],
    ...(a.provider_request_id
      ? ([["Provider request", <Id key="pr" value={a.provider_request_id} inline className="text-xs" />]] as Array<
          [string, React.ReactNode]
        >)
      : []),
    // What the imported run state recorded for the call itself (decision 0032): the runtime's word, not a decision here.
    ...(a.runtime_decision
      ? ([
          [
            "Run state recorded",
            <span key="rd" data-testid="runtime-decision">
              {a.runtime_decision === "approved"
                ? "approved by the runtime — that is not an approval here: an approver must decide"
                : "rejected by the runtime — imported as rejected"}
            </span>,
          ],
        ] as Array<[string, React.ReactNode]>)
      : []),
  ];
  return (
    <div className="space-y-4">
      <nav aria-label="Breadcrumb" className="text-sm">
        <Link href="/approvals" className="underline">
          Approvals
        </Link>{" "}
        / <span className="font-mono text-xs">{a.id}</span>
      </nav>
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold">
          {a.action} <span className="font-normal text-neutral-600">for task</span> <Id value={a.task_id} inline />
        </h1>
        <ApprovalStatusBadge status={a.status} reasons={a.stale_reasons} />
      </div>
      {a.superseded_by ? (
        <p className="rounded-md border border-neutral-300 bg-neutral-50 p-3 text-sm">
          This binding was replaced by a later decision.{" "}
          <Link href={`/approvals/${a.superseded_by}`} className="underline">
            See the current approval
          </Link>
          .
        </p>
      ) : null}
      {a.used_at ? (
        <p className="rounded-md border border-emerald-300 bg-emerald-50 p-3 text-sm">
          Used by an intent at <Time iso={a.used_at} />: an approval authorizes one go.
        </p>
      ) : null}
      {a.self_approval_allowed ? (
        <p className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm" data-testid="self-approval-note">
          <span aria-hidden="true">! </span>This workspace lets a requester approve their own request: separation of
          duties is relaxed (Settings → Approvals).
        </p>
      ) : null}

      {a.status === "stale" ? (
        <section
          aria-labelledby="stale-h"
          className="rounded-lg border border-amber-300 bg-amber-50 p-4"
          data-testid="stale-panel"
        >
          <h2 id="stale-h" className="text-base font-semibold text-amber-950">
            <span aria-hidden="true">! </span>Stale: what was approved no longer holds
          </h2>
          <ul className="mt-1 list-disc pl-5 text-sm text-amber-950">
            {a.stale_reasons.map((r) => (
              <li key={r} data-reason={r}>
                {STALE_REASON_TEXT[r]}
              </li>
            ))}
          </ul>
          {a.changes.length ? (
            <div className="mt-3 overflow-x-auto rounded border border-amber-200 bg-white">
              <table className="w-full table-fixed text-left text-sm" data-testid="changes-table">
                <caption className="sr-only">Bound values: approved and now</caption>
                <thead className="bg-neutral-50 text-xs uppercase tracking-wide text-neutral-600">
                  <tr>
                    <th scope="col" className="px-3 py-1.5">
                      Field
                    </th>
                    <th scope="col" className="px-3 py-1.5">
                      Approved
                    </th>
                    <th scope="col" className="px-3 py-1.5">
                      Now
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {a.changes.map((c) => (
                    <tr key={c.field} className="border-t border-neutral-100" data-field={c.field}>
                      <th scope="row" className="px-3 py-1.5 font-medium">
                        {FIELD_LABEL[c.field] ?? c.field}
                      </th>
                      <td className="px-3 py-1.5 font-mono text-xs break-all text-red-800">
                        <span className="sr-only">approved: </span>
                        <Id
                          value={c.field === "policy_version" ? policyVersionName(c.approved) : (c.approved ?? "—")}
                        />
                      </td>
                      <td className="px-3 py-1.5 font-mono text-xs break-all text-emerald-800">
                        <span className="sr-only">now: </span>
                        <Id value={c.field === "policy_version" ? policyVersionName(c.current) : (c.current ?? "—")} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          {policyFrom !== null && policyTo !== null && policyFrom !== policyTo ? (
            <p className="mt-2 text-sm">
              <Link
                href={`/policies?v=${policyTo}&compare=${policyFrom}`}
                className="font-medium text-blue-800 underline"
                data-testid="policy-diff-link"
              >
                See what changed in the policy from {policyVersionName(policyFrom)} to {policyVersionName(policyTo)}
              </Link>{" "}
              (field by field).
            </p>
          ) : null}
          {payloadChanges.length ? (
            <div className="mt-3" data-testid="payload-diff">
              <h3 className="text-sm font-semibold">Payload: approved → offered now</h3>
              <ul className="mt-1 space-y-0.5 font-mono text-xs">
                {payloadChanges.map((c) => (
                  <li key={c.path + c.kind} data-kind={c.kind}>
                    <span className="font-semibold">
                      {c.kind === "added" ? "+ " : c.kind === "removed" ? "− " : "~ "}
                      {c.path}
                    </span>{" "}
                    {c.kind !== "added" ? <del className="text-red-800">{JSON.stringify(c.before)}</del> : null}
                    {c.kind === "changed" ? " → " : " "}
                    {c.kind !== "removed" ? (
                      <ins className="text-emerald-800 no-underline">{JSON.stringify(c.after)}</ins>
                    ) : null}
                  </li>
                ))}
              </ul>
              <div className="mt-2 grid gap-2 md:grid-cols-2">
                <pre
                  className="max-h-96 overflow-auto rounded bg-white p-2 text-[11px] whitespace-pre-wrap break-words"
                  aria-label="Approved payload"
                  tabIndex={0}
                >
                  {JSON.stringify(a.payload, null, 2)}
                </pre>
                <pre
                  className="max-h-96 overflow-auto rounded bg-white p-2 text-[11px] whitespace-pre-wrap break-words"
                  aria-label="Payload offered now"
                  tabIndex={0}
                >
                  {JSON.stringify(a.offered_payload, null, 2)}
                </pre>
              </div>
            </div>
          ) : null}
          <p className="mt-2 text-xs text-amber-950">
            Re-approving binds a new approval to the current values; the old binding stays on record.
          </p>
        </section>
      ) : null}

      <div className="grid gap-4 lg:grid-cols-2">
        <section aria-labelledby="bound-h" className="min-w-0 rounded-lg border border-neutral-200 bg-white p-4">
          <h2 id="bound-h" className="text-base font-semibold">
            Bound to
          </h2>
          <dl
            className="mt-2 grid grid-cols-[max-content_minmax(0,1fr)] gap-x-4 gap-y-1 text-sm"
            data-testid="bound-fields"
          >
            {bound.map(([k, v]) => (
              <div key={k} className="contents">
                <dt className="text-neutral-600">{k}</dt>
                <dd className="min-w-0">{v}</dd>
              </div>
            ))}
          </dl>
        </section>
        <section aria-labelledby="payload-h" className="min-w-0 rounded-lg border border-neutral-200 bg-white p-4">
          <h2 id="payload-h" className="text-base font-semibold">
            Payload
          </h2>
          {a.payload === null && a.payload_digest === null ? (
            <p className="text-sm text-neutral-600">
              The runtime has not said what this write sends yet: its intent binds the digest.
            </p>
          ) : a.payload === null ? (
            <p
              className="mt-1 rounded-md border border-amber-300 bg-amber-50 p-2 text-sm text-amber-950"
              data-testid="digest-only-note"
            >
              <span aria-hidden="true">! </span>The runtime sent only a digest; nothing here shows what it covers. Ask
              the runtime&apos;s owner what the write sends before approving it.
            </p>
          ) : (
            <pre
              className="mt-2 max-h-96 overflow-auto rounded bg-neutral-50 p-2 text-xs whitespace-pre-wrap break-words"
              data-testid="approval-payload"
              tabIndex={0}
              aria-label="Payload JSON"
            >
              {JSON.stringify(a.payload, null, 2)}
            </pre>
          )}
          {a.payload === null ? null : (
            <p className="mt-1 text-xs text-neutral-500">
              A payload is accepted only with its own digest (sha256 of the RFC 8785 JSON of the tool and its
              arguments), so the bound digest covers what is shown. Values that look like credentials are shown as
              [REDACTED].
            </p>
          )}
        </section>
      </div>

      {published.length ? (
        <section
          aria-labelledby="publishes-h"
          className="min-w-0 rounded-lg border border-neutral-200 bg-white p-4"
          data-testid="approval-artifact"
        >
          <h2 id="publishes-h" className="text-base font-semibold">
            What it publishes
          </h2>
          <p className="mt-1 text-xs text-neutral-600">
            The task&apos;s artifact{published.length === 1 ? "" : "s"} the payload names, as the runtime uploaded{" "}
            {published.length === 1 ? "it" : "them"} (checked against the sha256 the checkpoint lists).
          </p>
          <div className="mt-2 space-y-3">
            {published.map((art) => (
              <div key={`${art.ref}@${art.sha256}`} className="min-w-0">
                <p className="mb-1 text-sm">
                  <span className="font-mono text-xs break-all">{art.ref}</span>{" "}
                  <span className="text-xs text-neutral-600">
                    · v{art.first_version} · sha256 <code className="font-mono">{art.sha256.slice(0, 12)}…</code>
                  </span>
                </p>
                <ArtifactViewer taskId={a.task_id} sha256={art.sha256} label={art.ref} />
              </div>
            ))}
          </div>
        </section>
      ) : null}

      {a.decision ? (
        <section
          aria-labelledby="decision-h"
          className="rounded-lg border border-neutral-200 bg-white p-4 text-sm"
          data-testid="decision"
        >
          <h2 id="decision-h" className="text-base font-semibold">
            Decision
          </h2>
          <p>
            <strong>{a.decision.decision === "approve" ? "Approved" : "Rejected"}</strong> by {a.decision.decided_by} at{" "}
            <Time iso={a.decision.decided_at} />
            {a.decision.expires_at ? (
              <>
                {" "}
                · expires <Time iso={a.decision.expires_at} />
              </>
            ) : null}
            {a.decision.self_approved ? " · approved by its requester (separation of duties relaxed)" : ""}
          </p>
          {a.decision.reason ? <p className="mt-1 text-neutral-700">Reason: {a.decision.reason}</p> : null}
          <p className="mt-1 text-xs">
            <Link href={`/audit?target=${encodeURIComponent(`approval:${a.id}`)}`} className="underline">
              Audit entries
            </Link>
          </p>
        </section>
      ) : null}

      {open ? (
        mayDecide && sod.allowed ? (
          <DecisionPanel
            id={a.id}
            action={a.action}
            taskId={a.task_id}
            stale={a.status === "stale"}
            payloadShown={a.payload !== null}
          />
        ) : (
          <p className="rounded-md border border-neutral-300 bg-neutral-50 p-3 text-sm" data-testid="cannot-decide">
            {mayDecide
              ? "You requested this approval, so another approver must decide it (separation of duties)."
              : `Your role (${actor.role}) cannot decide approvals; approvers, admins and owners can.`}
          </p>
        )
      ) : null}
    </div>
  );
}
