/**
 * The client's address as the sign-in throttle's "source" (decisions 0007 and 0030).
 *
 * `X-Forwarded-For` is read only when the operator says how many reverse proxies stand in front of the server:
 * `CUSTODY_TRUSTED_PROXY_HOPS` = N ≥ 1. Each proxy appends the address it saw, so the nearest one's entry is the last
 * and the client's is the N-th from the end (N = 1: one proxy; N = 2: a CDN in front of a load balancer), never past
 * the first entry. Without that setting (or 0) the header is ignored whatever it says, and the source is the TCP peer
 * of the request's socket (lib/server/peer-address.ts): a client cannot name another source.
 */
import { peerAddress } from "./peer-address";

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(",") : v;
}

/** The trusted proxy count from `CUSTODY_TRUSTED_PROXY_HOPS`: a whole number ≥ 0; anything else counts as 0. */
export function trustedProxyHops(value = process.env.CUSTODY_TRUSTED_PROXY_HOPS): number {
  const n = Number(value || 0);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/**
 * The source address of a request, normalised (IPv4-mapped IPv6 to IPv4, lower case, brackets and port dropped).
 * @param headers the request's headers (a `Headers` or next-auth's plain object).
 * @param hops trusted reverse proxies in front of the server (default from `CUSTODY_TRUSTED_PROXY_HOPS`); 0 ignores
 *   `X-Forwarded-For`.
 * @param peer the socket's remote address (default: the current request's, lib/server/peer-address.ts).
 * @returns the address, or `unknown` when there is none or it is not an address (never the all-sources key `*`).
 */
export function clientAddress(
  headers: HeaderBag,
  hops = trustedProxyHops(),
  peer: string | undefined = peerAddress(),
): string {
  const n = Number.isInteger(hops) && hops > 0 ? hops : 0;
  if (n === 0) return normalise(peer);
  const entries = (header(headers, "x-forwarded-for") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return entries.length ? normalise(entries[Math.max(0, entries.length - n)]) : normalise(peer);
}

function normalise(raw: string | undefined): string {
  if (!raw) return "unknown";
  const addr = raw
    .toLowerCase()
    .replace(/^\[|\](:\d+)?$/g, "")
    .replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
  return /^[0-9a-f:.]{2,45}$/.test(addr) ? addr : "unknown";
}
