"use client";

import { useQuery } from "@tanstack/react-query";
import { usePathname } from "next/navigation";
import { IntentLink } from "@/components/ui/IntentLink";
import { apiFetch } from "@/lib/client/api";

/** How often the header reads the approvals waiting (decision 0043). */
const BADGE_REFRESH_MS = 10_000;

type ApprovalPage = { approvals: unknown[]; next_cursor: string | null };

/**
 * Approvals waiting for a decision or a re-approval (pending or stale), read from `GET /api/v1/approvals` — the same
 * computed statuses as the Approvals page. Past 200 of a status the count says "200+".
 */
async function waitingCount(): Promise<{ count: number; more: boolean }> {
  const [pending, stale] = await Promise.all(
    (["pending", "stale"] as const).map((s) => apiFetch<ApprovalPage>(`/api/v1/approvals?status=${s}&limit=200`)),
  );
  return {
    count: (pending?.approvals.length ?? 0) + (stale?.approvals.length ?? 0),
    more: Boolean(pending?.next_cursor || stale?.next_cursor),
  };
}

const LINKS = [
  { href: "/", label: "Attention" },
  { href: "/tasks", label: "Tasks" },
  { href: "/approvals", label: "Approvals" },
  { href: "/maps", label: "Maps" },
  { href: "/policies", label: "Policies" },
  { href: "/audit", label: "Audit" },
  { href: "/settings", label: "Settings" },
];

/**
 * Top navigation (prefetching a page when its link is hovered or focused, not on every page load); marks the current
 * section with aria-current. `approvals`: how many approvals wait for a decision or
 * a re-approval (pending or stale) when the page was rendered, shown beside the link and kept current by polling.
 */
export function NavLinks({ approvals: initial = 0 }: { approvals?: number }) {
  const pathname = usePathname();
  // Live like the lists (decision 0043): the count the layout rendered, then read again every few seconds.
  const { data } = useQuery({
    queryKey: ["nav-approvals-waiting"],
    queryFn: waitingCount,
    initialData: { count: initial, more: false },
    staleTime: BADGE_REFRESH_MS,
    refetchInterval: BADGE_REFRESH_MS,
  });
  const approvals = data.count;
  return (
    <nav aria-label="Main" className="flex flex-wrap gap-1 text-sm">
      {LINKS.map((l) => {
        const active = l.href === "/" ? pathname === "/" : pathname.startsWith(l.href);
        return (
          <IntentLink
            key={l.href}
            href={l.href}
            aria-current={active ? "page" : undefined}
            className={`rounded px-2 py-1 ${active ? "bg-neutral-900 text-white" : "text-neutral-700 hover:bg-neutral-100"}`}
          >
            {l.label}
            {l.href === "/approvals" && approvals > 0 ? (
              <span
                className="ml-1 rounded-full bg-sky-100 px-1.5 text-xs font-semibold text-sky-900"
                data-testid="nav-approvals-count"
              >
                {approvals}
                {data.more ? "+" : ""}
                <span className="sr-only"> waiting</span>
              </span>
            ) : null}
          </IntentLink>
        );
      })}
    </nav>
  );
}
