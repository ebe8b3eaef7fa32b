import type { Metadata } from "next";
import Link from "next/link";
import { listAudit, verifyAuditChain } from "@/lib/domain/audit/read";
import { requirePageContext } from "@/lib/server/page-actor";
import { Time } from "@/components/ui/time";

export const metadata: Metadata = { title: "Audit log" };

type SP = Record<string, string | string[] | undefined>;

/** The tenant's append-only audit log, newest first, with the hash chain verified on every view. */
export default async function AuditPage({ searchParams }: { searchParams: Promise<SP> }) {
  const ctx = await requirePageContext();
  const sp = await searchParams;
  const before = typeof sp.before === "string" && /^\d+$/.test(sp.before) ? Number(sp.before) : undefined;
  const target = typeof sp.target === "string" && sp.target ? sp.target : undefined;
  const [page, chain] = await Promise.all([
    listAudit(ctx, { beforeSeq: before, limit: 50, target }),
    verifyAuditChain(ctx),
  ]);
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
      {target ? (
        <p className="text-sm">
          Showing entries for <code className="font-mono">{target}</code>.{" "}
          <Link href="/audit" className="underline">
            Show all
          </Link>
        </p>
      ) : null}
      {page.entries.length === 0 ? (
        <p className="rounded-lg border border-dashed border-neutral-300 bg-white p-8 text-center text-sm text-neutral-600">
          No entries yet.
        </p>
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
                      href={`/audit?target=${encodeURIComponent(e.target)}`}
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
        {before ? (
          <Link href={`/audit${target ? `?target=${encodeURIComponent(target)}` : ""}`} className="underline">
            Newest
          </Link>
        ) : null}
        {page.next_before ? (
          <Link
            href={`/audit?before=${page.next_before}${target ? `&target=${encodeURIComponent(target)}` : ""}`}
            className="underline"
          >
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
