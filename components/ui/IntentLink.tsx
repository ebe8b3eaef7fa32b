"use client";

/**
 * `next/link` that prefetches when the person reaches for it (pointer over it, or keyboard focus), not when it
 * scrolls into view. The navigation bar is on every dashboard page: with viewport prefetching, each page load sent
 * about sixteen requests that rendered the other pages' server components (twice per link: before and after the
 * page's streamed parts arrived) while the page itself was still rendering and hydrating — on a long run's task page
 * they competed with it for the server and the browser (`npm run bench -- timeline`).
 */
import Link from "next/link";
import { useRouter } from "next/navigation";
import type { ComponentProps } from "react";

/** Props of `next/link` with a string `href` (prefetching is this component's to decide). */
export type IntentLinkProps = Omit<ComponentProps<typeof Link>, "href" | "prefetch"> & { href: string };

/** A link that prefetches its page on hover or focus only. */
export function IntentLink({ href, onMouseEnter, onFocus, ...props }: IntentLinkProps) {
  const router = useRouter();
  return (
    <Link
      {...props}
      href={href}
      prefetch={false}
      onMouseEnter={(e) => {
        router.prefetch(href);
        onMouseEnter?.(e);
      }}
      onFocus={(e) => {
        router.prefetch(href);
        onFocus?.(e);
      }}
    />
  );
}
