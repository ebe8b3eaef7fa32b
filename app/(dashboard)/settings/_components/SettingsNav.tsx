"use client";

/**
 * The Settings section list: one link per section page, the current one marked with aria-current. Plain links in a
 * list (Tab moves between them, Enter follows); at narrow widths the list wraps rather than scrolling the page.
 */
import { usePathname } from "next/navigation";
import { IntentLink } from "@/components/ui/IntentLink";
import { SETTINGS_SECTIONS } from "./sections";

export function SettingsNav() {
  const pathname = usePathname();
  return (
    <nav aria-label="Settings sections" data-testid="settings-nav">
      <ul className="flex flex-wrap gap-1 border-b border-neutral-200 pb-2 text-sm">
        {SETTINGS_SECTIONS.map((s) => {
          const active = pathname === s.href || pathname.startsWith(`${s.href}/`);
          return (
            <li key={s.href}>
              <IntentLink
                href={s.href}
                aria-current={active ? "page" : undefined}
                className={`block rounded px-2 py-1 focus-visible:outline focus-visible:outline-2 focus-visible:outline-sky-600 ${active ? "bg-neutral-900 text-white" : "text-neutral-700 hover:bg-neutral-100"}`}
              >
                {s.label}
              </IntentLink>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
