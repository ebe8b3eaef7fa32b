/**
 * The client's address as the sign-in throttle's "source". `next start` sets `x-forwarded-for` to the socket's
 * address only when the request has none, and a reverse proxy appends the address it saw. So the entry to trust
 * is the last one, or, behind N proxies that each append (a CDN in front of a load balancer: N = 1), the one N
 * places before it: `CUSTODY_TRUSTED_PROXY_HOPS` (default 0). Without a proxy that sets the header, a client can
 * claim any address; the per-email ceiling across all sources still bounds guessing (decision 0007).
 */

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(",") : v;
}

/**
 * The source address of a request, normalised (IPv4-mapped IPv6 to IPv4, lower case); `unknown` when the header
 * is missing or its entry is not an address.
 */
export function clientAddress(headers: HeaderBag, hops = Number(process.env.CUSTODY_TRUSTED_PROXY_HOPS || 0)): string {
  const entries = (header(headers, "x-forwarded-for") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const n = Number.isInteger(hops) && hops > 0 ? hops : 0;
  const raw = entries[Math.max(0, entries.length - 1 - n)];
  if (!raw) return "unknown";
  const addr = raw
    .toLowerCase()
    .replace(/^\[|\](:\d+)?$/g, "")
    .replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
  return /^[0-9a-f:.]{2,45}$/.test(addr) ? addr : "unknown";
}
