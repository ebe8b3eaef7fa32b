/**
 * Runs once when the server starts, before it serves a request (Next's instrumentation hook). On the Node.js runtime
 * it records each request's TCP peer address for the sign-in throttle (lib/server/peer-address.ts) and starts the
 * notification delivery worker (lib/server/notification-worker.ts) and the event store's upkeep (partitions ahead of the
 * clock, retention: lib/server/maintenance.ts).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { recordPeerAddresses } = await import("./lib/server/peer-address");
    recordPeerAddresses();
    const { startNotificationWorker } = await import("./lib/server/notification-worker");
    startNotificationWorker();
    const { startMaintenance } = await import("./lib/server/maintenance");
    startMaintenance();
  }
}
