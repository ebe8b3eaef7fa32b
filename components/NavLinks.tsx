"use client";

import { usePathname } from "next/navigation";
import { IntentLink } from "@/components/ui/IntentLink";

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
 * a re-approval (pending or stale), shown beside the link.
 */
export function NavLinks({ approvals = 0 }: { approvals?: number }) {
  const pathname = usePathname();
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
                <span className="sr-only"> waiting</span>
              </span>
            ) : null}
          </IntentLink>
        );
      })}
    </nav>
  );
}
