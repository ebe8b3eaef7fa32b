/**
 * The address of the TCP peer a request arrived from, which Next does not show a route handler (`next start` only
 * copies it into `X-Forwarded-For` when the request carries none, so a client that sends the header hides it).
 * {@link recordPeerAddresses} runs once at server start (instrumentation.ts) and wraps the HTTP server's `request`
 * event so the handling of each request runs inside an AsyncLocalStorage holding its socket's remote address;
 * {@link peerAddress} reads it anywhere in that request's asynchronous work — route handlers, next-auth's
 * `authorize`. Nothing a client sends can set it. docs/decisions/0007-sessions-and-sign-in-throttle.md.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import http from "node:http";

const globalForPeer = globalThis as unknown as {
  __custodyPeer?: AsyncLocalStorage<string>;
  __custodyPeerRecording?: boolean;
};

/** Shared by every module copy: the instrumentation bundle writes it, the route bundles read it. */
const storage: AsyncLocalStorage<string> = (globalForPeer.__custodyPeer ??= new AsyncLocalStorage<string>());

/**
 * Makes every HTTP server of this process serve each request inside a store holding the request socket's remote
 * address. Idempotent. Call it before the first request is served (Next runs `register()` of instrumentation.ts
 * before it hands requests to the app).
 */
export function recordPeerAddresses(): void {
  if (globalForPeer.__custodyPeerRecording) return;
  globalForPeer.__custodyPeerRecording = true;
  const emit = http.Server.prototype.emit as (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean;
  http.Server.prototype.emit = function emitWithPeer(this: http.Server, event: string | symbol, ...args: unknown[]) {
    const req = args[0] as http.IncomingMessage | undefined;
    const peer = event === "request" ? req?.socket?.remoteAddress : undefined;
    if (peer === undefined) return emit.apply(this, [event, ...args]);
    return storage.run(peer, () => emit.apply(this, [event, ...args]));
  } as typeof http.Server.prototype.emit;
}

/** The remote address of the socket the current request came in on, as Node reports it; undefined outside one. */
export function peerAddress(): string | undefined {
  return storage.getStore();
}
