import type { Metadata } from "next";
import Link from "next/link";
import { can } from "@/lib/domain/authz";
import { diffPolicies, type PolicyDiff } from "@/lib/domain/policies/diff";
import { linesOfPaths } from "@/lib/domain/policies/locate";
import { getPolicyVersion, listPolicyVersions, type PolicySummary, type PolicyView } from "@/lib/domain/policies/store";
import { isDomainError } from "@/lib/domain/errors";
import { requirePageContext } from "@/lib/server/page-actor";
import { ActivateButton, PolicyEditor } from "@/components/policies/PolicyEditor";
import { FindingList, SeverityBadge, type FindingView } from "@/components/policies/FindingList";
import { Time } from "@/components/ui/time";
import { policyVersionName } from "@/lib/domain/policies/version-name";

export const metadata: Metadata = { title: "Policies" };

type SP = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (typeof v === "string" ? v : undefined);
const versionOf = (v: string | undefined) => (v && /^[1-9]\d{0,8}$/.test(v) ? Number(v) : null);

/**
 * The tenant's policy versions (docs/concepts.md#policy-versions-and-lint): lint a pasted or uploaded document, store
 * it as the next version, read a version with its lint findings beside the lines they concern, compare two versions
 * (hosts added and removed), and activate one (owners and admins). `?v=N` opens a version; `&compare=M` diffs it
 * against version M.
 */
export default async function PoliciesPage({ searchParams }: { searchParams: Promise<SP> }) {
  const ctx = await requirePageContext();
  const { actor } = ctx;
  const sp = await searchParams;
  const canManage = can(actor, "policies.manage");
  const versions = await listPolicyVersions(ctx);
  const current = versions.find((v) => v.active) ?? null;
  const selectedNumber = versionOf(one(sp.v)) ?? current?.version ?? versions[0]?.version ?? null;
  let selected: PolicyView | null = null;
  let problem: string | null = null;
  if (selectedNumber !== null) {
    try {
      selected = await getPolicyVersion(ctx, { version: selectedNumber });
    } catch (err) {
      if (!isDomainError(err)) throw err;
      problem = `${err.message} Pick a version from the list.`;
    }
  }
  const compareNumber =
    versionOf(one(sp.compare)) ??
    (selected && current && current.version !== selected.version ? current.version : null) ??
    (selected && selected.version > 1 ? selected.version - 1 : null);
  let compare: PolicyView | null = null;
  if (selected && compareNumber !== null && compareNumber !== selected.version) {
    try {
      compare = await getPolicyVersion(ctx, { version: compareNumber });
    } catch (err) {
      if (!isDomainError(err)) throw err;
    }
  }
  const diff = selected?.document && compare?.document ? diffPolicies(compare.document, selected.document) : null;

  return (
    <div className="space-y-4">
      <div className="max-w-3xl">
        <h1 className="text-xl font-semibold">Policies</h1>
        <p className="text-sm text-neutral-700">
          Which hosts a run may reach, which credentials go to which hosts, and which tools write. Each stored document
          is an immutable version; runs are checked against the current one. A version with a lint error cannot be
          activated.
        </p>
        <p className="mt-1 text-sm" data-testid="current-policy">
          {current ? (
            <>
              Current policy: <strong>{policyVersionName(current.version)}</strong>, activated{" "}
              <Time iso={current.activated_at} />.
            </>
          ) : (
            <>
              No policy is active yet
              {canManage ? ": store a document below and activate it." : "; an owner or admin activates one."}
            </>
          )}
        </p>
      </div>

      <div className="grid gap-4 xl:grid-cols-2">
        <PolicyEditor canStore={canManage} />
        <VersionList
          versions={versions}
          selected={selected?.version ?? null}
          canManage={canManage}
          current={current?.version ?? null}
        />
      </div>

      {problem ? (
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 p-3 text-sm text-red-800">
          {problem}
        </p>
      ) : null}
      {selected ? (
        <div className="grid gap-4 xl:grid-cols-2">
          <SourceWithFindings policy={selected} canManage={canManage} current={current?.version ?? null} />
          <section aria-labelledby="policy-diff-h" className="rounded-lg border border-neutral-200 bg-white p-3">
            <h2 id="policy-diff-h" className="text-sm font-semibold">
              {compare ? `Changes from v${compare.version} to v${selected.version}` : "Changes"}
            </h2>
            {versions.length > 1 ? (
              <form action="/policies" className="mt-1 flex flex-wrap items-end gap-2 text-sm">
                <input type="hidden" name="v" value={selected.version} />
                <label className="text-xs font-medium text-neutral-800">
                  Compare with
                  <select
                    name="compare"
                    defaultValue={compare?.version ?? ""}
                    className="ml-1 rounded-md border border-neutral-400 px-2 py-1 text-sm"
                  >
                    {versions
                      .filter((v) => v.version !== selected!.version)
                      .map((v) => (
                        <option key={v.version} value={v.version}>
                          {policyVersionName(v.version)}
                          {v.active ? " (current)" : ""}
                        </option>
                      ))}
                  </select>
                </label>
                <button className="rounded-md border border-neutral-400 px-2 py-1 text-sm">Compare</button>
              </form>
            ) : null}
            {diff ? (
              <DiffView diff={diff} />
            ) : (
              <p className="mt-2 text-sm text-neutral-700">
                {compare
                  ? "One of the two versions has a document whose shape is wrong; it cannot be compared."
                  : "No other version to compare with yet."}
              </p>
            )}
          </section>
        </div>
      ) : versions.length === 0 ? (
        <div
          className="rounded-lg border border-dashed border-neutral-400 bg-white p-6 text-sm text-neutral-800"
          data-testid="policies-empty"
        >
          <h2 className="text-base font-semibold text-neutral-900">No policy versions yet</h2>
          <p className="mt-1">
            Paste the document your runs should follow above and lint it; runtimes can lint in their own CI with{" "}
            <code>POST /api/v1/policies/lint</code>.
          </p>
        </div>
      ) : null}
    </div>
  );
}

function VersionList({
  versions,
  selected,
  canManage,
  current,
}: {
  versions: PolicySummary[];
  selected: number | null;
  canManage: boolean;
  current: number | null;
}) {
  return (
    <section aria-labelledby="policy-versions-h" className="rounded-lg border border-neutral-200 bg-white">
      <h2 id="policy-versions-h" className="border-b border-neutral-200 px-3 py-2 text-sm font-semibold">
        Versions
      </h2>
      {versions.length === 0 ? (
        <p className="p-3 text-sm text-neutral-700">None stored yet.</p>
      ) : (
        <div className="max-h-96 overflow-auto">
          <table className="w-full text-sm">
            <thead className="bg-neutral-50 text-left text-xs text-neutral-700">
              <tr>
                <th className="px-3 py-1.5">Version</th>
                <th className="px-3 py-1.5">Lint</th>
                <th className="px-3 py-1.5">Stored</th>
                <th className="px-3 py-1.5">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr
                  key={v.version}
                  className={`border-t border-neutral-100 ${v.version === selected ? "bg-sky-50" : ""}`}
                  data-testid="policy-row"
                  data-version={v.version}
                >
                  <td className="px-3 py-1.5">
                    <Link
                      href={`/policies?v=${v.version}`}
                      className="font-medium text-sky-800 underline"
                      aria-current={v.version === selected ? "true" : undefined}
                    >
                      {policyVersionName(v.version)}
                    </Link>
                    {v.active ? (
                      <span className="ml-2 rounded-full bg-green-100 px-2 py-0.5 text-xs font-medium text-green-900">
                        current
                      </span>
                    ) : null}
                  </td>
                  <td className="px-3 py-1.5">
                    {v.valid ? (
                      <span className="text-green-800" data-testid="policy-lint-word">
                        {v.warnings
                          ? `passes with ${v.warnings} warning${v.warnings === 1 ? "" : "s"}`
                          : "passes, no findings"}
                      </span>
                    ) : (
                      <span className="text-red-800">has errors</span>
                    )}
                  </td>
                  <td className="px-3 py-1.5 text-xs text-neutral-700">
                    <Time iso={v.created_at} /> by {v.created_by}
                  </td>
                  <td className="px-3 py-1.5 text-right">
                    {canManage && v.valid && !v.active ? (
                      <ActivateButton version={v.version} current={current} />
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The text as stored, numbered, with each finding right under the line of the field it concerns. */
function SourceWithFindings({
  policy,
  canManage,
  current,
}: {
  policy: PolicyView;
  canManage: boolean;
  current: number | null;
}) {
  const lines = policy.source_text.replace(/\n$/, "").split("\n");
  const at = linesOfPaths(
    policy.source_text,
    policy.findings.map((f) => f.path),
  );
  const byLine = new Map<number, FindingView[]>();
  const unplaced: FindingView[] = [];
  for (const f of policy.findings) {
    const line = at.get(f.path);
    if (line === undefined) unplaced.push(f);
    else byLine.set(line, [...(byLine.get(line) ?? []), f]);
  }
  const errors = policy.findings.filter((f) => f.severity === "error").length;
  const warnings = policy.findings.length - errors;
  return (
    <section
      aria-labelledby="policy-source-h"
      className="min-w-0 rounded-lg border border-neutral-200 bg-white p-3"
      data-testid="policy-source"
    >
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="policy-source-h" className="text-sm font-semibold">
          Policy {policyVersionName(policy.version)} {policy.active ? "(current)" : ""}
        </h2>
        {canManage && policy.valid && !policy.active ? (
          <ActivateButton version={policy.version} current={current} />
        ) : null}
      </div>
      <p className="text-xs text-neutral-700">
        {policy.source_format.toUpperCase()}, digest <code className="break-all">{policy.digest.slice(0, 16)}…</code> ·{" "}
        {errors ? `${errors} error${errors === 1 ? "" : "s"}` : "no errors"}, {warnings} warning
        {warnings === 1 ? "" : "s"}
        {!policy.valid ? " · cannot be activated" : ""}
      </p>
      {unplaced.length ? <FindingList findings={unplaced} /> : null}
      <ol
        className="mt-2 max-h-[32rem] overflow-auto rounded border border-neutral-200 bg-neutral-50 font-mono text-xs"
        aria-label={`Text of version ${policy.version}`}
      >
        {lines.map((text, i) => {
          const found = byLine.get(i + 1);
          return (
            <li
              key={i}
              className={found ? (found.some((f) => f.severity === "error") ? "bg-red-50" : "bg-amber-50") : undefined}
            >
              <div className="flex">
                <span className="w-10 shrink-0 select-none pr-2 text-right text-neutral-600" aria-hidden="true">
                  {i + 1}
                </span>
                <span className="whitespace-pre-wrap break-all">{text || " "}</span>
              </div>
              {found?.map((f, k) => (
                <div
                  key={k}
                  className="flex flex-wrap items-baseline gap-2 py-0.5 pl-12 font-sans"
                  data-testid="line-finding"
                  data-path={f.path}
                  data-line={i + 1}
                >
                  <SeverityBadge severity={f.severity} />
                  <code className="text-xs">{f.path}</code>
                  <span className="text-neutral-900">{f.message}</span>
                </div>
              ))}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

function DiffView({ diff }: { diff: PolicyDiff }) {
  if (diff.same)
    return (
      <p className="mt-2 text-sm text-neutral-700">The two versions allow the same hosts, credentials and tools.</p>
    );
  const named = (label: string, d: PolicyDiff["tools"]) =>
    d.added.length || d.removed.length || d.changed.length ? (
      <p className="text-sm">
        <span className="font-medium">{label}:</span>{" "}
        {d.added.map((n) => (
          <span key={`a${n}`} className="mr-2 text-green-800">
            + {n}
          </span>
        ))}
        {d.removed.map((n) => (
          <span key={`r${n}`} className="mr-2 text-red-800 line-through">
            − {n}
          </span>
        ))}
        {d.changed.map((n) => (
          <span key={`c${n}`} className="mr-2 text-amber-900">
            ~ {n}
          </span>
        ))}
      </p>
    ) : null;
  return (
    <div className="mt-2 space-y-2" data-testid="policy-diff">
      {diff.access ? (
        <p className="text-sm">
          <span className="font-medium">Network access:</span> {diff.access.from} → <strong>{diff.access.to}</strong>
        </p>
      ) : null}
      <ul className="space-y-1 text-sm">
        {diff.hosts
          .filter((h) => h.added.length || h.removed.length)
          .map((h) => (
            <li key={h.list}>
              <code className="text-xs">{h.list}</code>
              <ul className="ml-4">
                {h.added.map((x) => (
                  <li key={`+${x}`} className="text-green-800" data-testid="host-added">
                    <span aria-hidden="true">+ </span>
                    <span className="sr-only">added </span>
                    {x}
                  </li>
                ))}
                {h.removed.map((x) => (
                  <li key={`-${x}`} className="text-red-800" data-testid="host-removed">
                    <span aria-hidden="true">− </span>
                    <span className="sr-only">removed </span>
                    <span className="line-through">{x}</span>
                  </li>
                ))}
              </ul>
            </li>
          ))}
      </ul>
      {named("Credentials", diff.credentials)}
      {named("Tools", diff.tools)}
    </div>
  );
}
