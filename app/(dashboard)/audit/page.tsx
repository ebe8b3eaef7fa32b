import type { Metadata } from "next";
import Link from "next/link";
import { AUDIT_ACTIONS } from "@/lib/domain/audit/actions";
import {
  auditFilterParams,
  hasAuditFilters,
  listAudit,
  parseAuditQuery,
  verifyAuditChain,
  type AuditFilters,
  type AuditQuery,
} from "@/lib/domain/audit/read";
import { isDomainError } from "@/lib/domain/errors";
import { requirePageContext } from "@/lib/server/page-actor";
import { Time } from "@/components/ui/time";

export const metadata: Metadata = { title: "Audit log" };

type SP = Record<string, string | string[] | undefined>;

const FIELD =
  "rounded-md border border-neutral-300 px-2 py-1.5 text-sm focus-visible:outline-2 focus-visible:outline-sky-600";

/**
 * The tenant's append-only audit log, newest first, with the hash chain verified on every view. Filters (actor,
 * action, from/to, task, target) live in the URL and are read by `parseAuditQuery`, the same parse as
 * `GET /api/v1/audit`; the Export link downloads exactly what the filters select (decision 0048).
 */
export default async function AuditPage({ searchParams }: { searchParams: Promise<SP> }) {
  const ctx = await requirePageContext();
  const sp = await searchParams;
  let query: AuditQuery | null = null;
  let problem: string | null = null;
  try {
    query = parseAuditQuery(sp);
  } catch (err) {
    if (!isDomainError(err)) throw err;
    problem = err.message;
  }
  const [page, chain] = await Promise.all([
    query ? listAudit(ctx, query) : Promise.resolve(null),
    verifyAuditChain(ctx),
  ]);
  const filters = query?.filters ?? {};
  const filtered = query ? hasAuditFilters(filters) : true;
  const params = auditFilterParams(filters);
  const withParams = (base: string, extra?: Record<string, string>) => {
    const p = new URLSearchParams(params);
    for (const [k, v] of Object.entries(extra ?? {})) p.set(k, v);
    const q = p.toString();
    return q ? `${base}?${q}` : base;
  };
  const withoutTarget = auditFilterParams({ ...filters, target: undefined }).toString();
  const anyTarget = withoutTarget ? `/audit?${withoutTarget}` : "/audit";
  // What the form shows: the parsed value, or (after a refusal) what was typed, so it can be corrected.
  const shown = (k: keyof AuditFilters): string => {
    if (query) return filters[k] ?? "";
    const v = sp[k];
    return typeof v === "string" ? v : "";
  };
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Audit log</h1>
          <p className="text-sm text-neutral-600">
            Every human decision and API change, append-only; each entry carries the hash of the one before.
          </p>
        </div>
        <p
          className={`rounded-md border px-3 py-1.5 text-sm ${chain.ok ? "border-emerald-300 bg-emerald-50 text-emerald-900" : "border-red-300 bg-red-50 text-red-900"}`}
          data-testid="audit-chain"
          data-ok={chain.ok}
        >
          <span aria-hidden="true">{chain.ok ? "✔ " : "✕ "}</span>
          Chain {chain.ok ? "verified" : "broken"}: {chain.message}
        </p>
      </div>
      <form
        method="get"
        action="/audit"
        aria-label="Filter the audit log"
        className="flex flex-wrap items-end gap-2 text-sm"
        data-testid="audit-filters"
      >
        <div className="flex min-w-0 flex-col text-xs font-medium">
          <label htmlFor="audit-actor">Actor</label>
          <input
            id="audit-actor"
            name="actor"
            defaultValue={shown("actor")}
            className={FIELD}
            placeholder="email or id"
          />
        </div>
        <div className="flex min-w-0 flex-col text-xs font-medium">
          <label htmlFor="audit-action">Action</label>
          <select id="audit-action" name="action" defaultValue={shown("action")} className={FIELD}>
            <option value="">any action</option>
            {AUDIT_ACTIONS.toSorted().map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </div>
        <div className="flex min-w-0 flex-col text-xs font-medium">
          <label htmlFor="audit-from">From (UTC)</label>
          <input id="audit-from" type="date" name="from" defaultValue={dayOf(shown("from"))} className={FIELD} />
        </div>
        <div className="flex min-w-0 flex-col text-xs font-medium">
          <label htmlFor="audit-to">To (UTC)</label>
          <input id="audit-to" type="date" name="to" defaultValue={dayOf(shown("to"))} className={FIELD} />
        </div>
        <div className="flex min-w-0 flex-col text-xs font-medium">
          <label htmlFor="audit-task">Task</label>
          <input id="audit-task" name="task" defaultValue={shown("task")} className={FIELD} placeholder="task id" />
        </div>
        {shown("target") ? <input type="hidden" name="target" value={shown("target")} /> : null}
        <button className="rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600">
          Filter
        </button>
        {filtered ? (
          <Link href="/audit" className="py-1.5 text-sm underline" data-testid="audit-clear">
            Clear filters
          </Link>
        ) : null}
        {query ? (
          <a
            href={withParams("/api/v1/audit/export")}
            download
            className="ml-auto rounded-md border border-neutral-300 px-3 py-1.5 text-sm font-medium hover:bg-neutral-50 focus-visible:outline-2 focus-visible:outline-sky-600"
            data-testid="audit-export"
          >
            Export{filtered ? " filtered" : ""} (JSON Lines)
          </a>
        ) : null}
      </form>
      {filters.target ? (
        <p className="text-sm">
          Showing entries for <code className="font-mono [overflow-wrap:anywhere]">{filters.target}</code>.{" "}
          <Link href={anyTarget} className="underline">
            Any target
          </Link>
        </p>
      ) : null}
      {problem ? (
        <div
          role="alert"
          className="rounded-lg border border-red-300 bg-red-50 p-4 text-sm text-red-900"
          data-testid="audit-filter-error"
        >
          <p>These filters cannot be read: {problem}</p>
          <p className="mt-1">
            Correct the field above, or{" "}
            <Link href="/audit" className="underline">
              clear the filters
            </Link>
            .
          </p>
        </div>
      ) : !page ? null : page.entries.length === 0 ? (
        <div
          className="rounded-lg border border-dashed border-neutral-300 bg-white p-8 text-center text-sm text-neutral-600"
          data-testid="audit-empty"
        >
          {filtered ? (
            <p>
              No entries match these filters.{" "}
              <Link href="/audit" className="underline">
                Clear the filters
              </Link>{" "}
              to see the whole log.
            </p>
          ) : (
            <p>No entries yet.</p>
          )}
        </div>
      ) : (
        // On a narrow screen the table scrolls sideways inside its card (the page itself never does); every cell
        // stays on one line, and the details show as one truncated line that expands to the full JSON.
        <div
          className="relative overflow-x-auto rounded-lg border border-neutral-200 bg-white"
          data-testid="audit-table"
        >
          <table className="w-full min-w-[56rem] text-left text-sm">
            <thead className="border-b border-neutral-200 bg-neutral-50 text-xs uppercase tracking-wide text-neutral-600">
              <tr>
                <th scope="col" className="px-3 py-2">
                  #
                </th>
                <th scope="col" className="px-3 py-2">
                  When
                </th>
                <th scope="col" className="px-3 py-2">
                  Who
                </th>
                <th scope="col" className="px-3 py-2">
                  Action
                </th>
                <th scope="col" className="px-3 py-2">
                  Target
                </th>
                <th scope="col" className="px-3 py-2">
                  Details
                </th>
              </tr>
            </thead>
            <tbody>
              {page.entries.map((e) => (
                <tr key={e.seq} className="border-b border-neutral-100 align-top last:border-0" data-testid="audit-row">
                  <td className="px-3 py-2 tabular-nums" title={`hash ${e.hash}`}>
                    {e.seq}
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 text-xs">
                    <Time iso={e.at} />
                  </td>
                  <td className="px-3 py-2 text-xs">
                    <span className="block max-w-[14rem] truncate" title={e.actor_label}>
                      {e.actor_label}
                    </span>
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 font-mono text-xs">{e.action}</td>
                  <td className="px-3 py-2 font-mono text-xs" data-testid="audit-target">
                    <Link
                      href={`/audit?${auditFilterParams({ target: e.target }).toString()}`}
                      className="block max-w-[16rem] truncate underline-offset-2 hover:underline"
                      title={e.target}
                    >
                      {e.target}
                    </Link>
                  </td>
                  <td className="px-3 py-2 font-mono text-xs text-neutral-700">
                    <AuditDetails details={e.details} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Pagination" className="flex gap-3 text-sm">
        {query?.before ? (
          <Link href={withParams("/audit")} className="underline">
            Newest
          </Link>
        ) : null}
        {page?.next_before ? (
          <Link href={withParams("/audit", { before: String(page.next_before) })} className="underline">
            Older entries
          </Link>
        ) : null}
      </nav>
    </div>
  );
}

/**
 * An entry's details: one truncated line (the compact JSON) that opens, by click or keyboard, to the full JSON,
 * wrapped inside the column.
 */
function AuditDetails({ details }: { details: Record<string, unknown> }) {
  if (Object.keys(details).length === 0) return <span className="text-neutral-400">—</span>;
  const compact = JSON.stringify(details);
  return (
    <details className="group w-[24rem] max-w-[24rem]" data-testid="audit-details">
      <summary
        className="block cursor-pointer list-none truncate rounded-sm hover:text-neutral-900 focus-visible:outline-2 focus-visible:outline-sky-600 [&::-webkit-details-marker]:hidden"
        title={compact}
      >
        <span aria-hidden="true" className="mr-1 inline-block text-neutral-400 group-open:rotate-90">
          ▸
        </span>
        {compact}
      </summary>
      <pre className="mt-1 whitespace-pre-wrap rounded bg-neutral-50 p-2 text-[11px] [overflow-wrap:anywhere]">
        {JSON.stringify(details, null, 2)}
      </pre>
    </details>
  );
}

/** A `from`/`to` value as a date field holds it (its day); an API-style date-time shows its UTC day. */
function dayOf(v: string): string {
  return /^\d{4}-\d{2}-\d{2}/.test(v) ? v.slice(0, 10) : "";
}
