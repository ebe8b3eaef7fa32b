/**
 * Runs the notification delivery worker in the server process (decision 0040): every `CUSTODY_NOTIFY_POLL_MS`
 * (default 1000) it sends the deliveries that are due (lib/domain/notifications/deliver.ts). Every server of a
 * deployment runs one; they share the outbox through `FOR UPDATE SKIP LOCKED`. `CUSTODY_NOTIFICATIONS=off` disables it.
 */
import { getOwnerDb } from "@/db";
import { connectionErrorCode } from "@/db/connection-errors";
import { secretsSealKey } from "@/lib/config/webhook-key";
import { deliverDue } from "@/lib/domain/notifications/deliver";

/** Starts the loop once per process; the timer does not keep the process alive. */
export function startNotificationWorker(): void {
  if (process.env.CUSTODY_NOTIFICATIONS === "off") return;
  const g = globalThis as { __custodyNotifier?: boolean };
  if (g.__custodyNotifier) return;
  g.__custodyNotifier = true;
  const every = Number(process.env.CUSTODY_NOTIFY_POLL_MS ?? 1000);
  const leaseSeconds = Number(process.env.CUSTODY_NOTIFY_LEASE_SECONDS ?? 30);
  const port = process.env.PORT ?? "3000";
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const siteUrl = (process.env.NEXTAUTH_URL ?? `http://localhost:${port}`).replace(/\/+$/, "");
      // A full batch means more may be due: keep going until a step finds fewer.
      while (
        (await deliverDue(await getOwnerDb(), { sealKey: secretsSealKey(), siteUrl, leaseSeconds, limit: 10 })) === 10
      );
    } catch (err) {
      const lost = connectionErrorCode(err);
      console.error(
        `notification worker: ${lost ? `database unavailable (${lost})` : err instanceof Error ? err.message : String(err)}`,
      );
    } finally {
      busy = false;
    }
  };
  setInterval(() => void tick(), Number.isFinite(every) && every >= 100 ? every : 1000).unref();
}
