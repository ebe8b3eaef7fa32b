"use client";

/**
 * Keeps a server-rendered list current (decision 0043): react-query's polling (the way the task page follows a live
 * run, lib/client/queries.ts) drives `router.refresh()`, so the page's server component reads the list again and
 * React merges the new rows in place — filters typed into a form, scroll position and focus stay. Polling pauses
 * while the tab is hidden (react-query's `refetchIntervalInBackground: false`) and catches up when it is shown again.
 * Shows when the list was last read, in UTC like every other time here.
 */
import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useTransition } from "react";

/** How often a live list reads itself again. */
export const LIVE_LIST_MS = 5_000;

/** A small "Live · updated hh:mm:ss UTC" line; `name` keys the poll (one per page). */
export function LiveRefresh({ name, intervalMs = LIVE_LIST_MS }: { name: string; intervalMs?: number }) {
  const router = useRouter();
  const [, startTransition] = useTransition();
  const { dataUpdatedAt } = useQuery({
    queryKey: ["live-list", name],
    queryFn: () => {
      startTransition(() => router.refresh());
      return Date.now();
    },
    refetchInterval: intervalMs,
    refetchIntervalInBackground: false,
    refetchOnWindowFocus: true,
    // The first render already shows fresh rows: do not refresh on mount.
    initialData: () => Date.now(),
    staleTime: intervalMs,
  });
  const at = new Date(dataUpdatedAt).toISOString().slice(11, 19);
  return (
    <p className="text-xs text-neutral-500" data-testid="live-refresh">
      <span aria-hidden="true" className="mr-1 inline-block h-2 w-2 rounded-full bg-emerald-500" />
      Live: updates every {Math.round(intervalMs / 1000)} s · read at <span suppressHydrationWarning>{at}</span> UTC
    </p>
  );
}
