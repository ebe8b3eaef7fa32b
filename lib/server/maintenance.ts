/**
 * The event store's upkeep in the server process (decision 0054): at start and then every
 * `CUSTODY_MAINTENANCE_INTERVAL_S` seconds (default 3600) it creates the coming months' history partitions and applies
 * each workspace's event retention (lib/domain/retention/partitions.ts). Every server of a deployment runs it; the
 * partition creation and the retention run each take an advisory lock, so they do not collide.
 * `CUSTODY_MAINTENANCE=off` disables it (then run it from elsewhere, or partitions are not created ahead: events of a
 * month without its partition go to `events_history_default` and are moved into their month when it is created).
 */
import { getOwnerDb } from "@/db";
import { connectionErrorCode } from "@/db/connection-errors";
import { applyEventRetention, ensureEventMonths } from "@/lib/domain/retention/partitions";

/** Starts the loop once per process; the timer does not keep the process alive. */
export function startMaintenance(): void {
  if (process.env.CUSTODY_MAINTENANCE === "off") return;
  const g = globalThis as { __custodyMaintenance?: boolean };
  if (g.__custodyMaintenance) return;
  g.__custodyMaintenance = true;
  const seconds = Number(process.env.CUSTODY_MAINTENANCE_INTERVAL_S ?? 3600);
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const owner = await getOwnerDb();
      await ensureEventMonths(owner);
      const { dropped } = await applyEventRetention(owner);
      for (const d of dropped)
        console.log(
          `retention: dropped ${d.partition} (${d.tenants.reduce((n, t) => n + t.eventsDropped, 0)} events; ` +
            `${d.tenants.reduce((n, t) => n + t.eventsKept, 0)} of tasks still running kept)`,
        );
    } catch (err) {
      const lost = connectionErrorCode(err);
      console.error(
        `maintenance: ${lost ? `database unavailable (${lost})` : err instanceof Error ? err.message : String(err)}`,
      );
    } finally {
      busy = false;
    }
  };
  void tick();
  setInterval(() => void tick(), (Number.isFinite(seconds) && seconds >= 1 ? seconds : 3600) * 1000).unref();
}
