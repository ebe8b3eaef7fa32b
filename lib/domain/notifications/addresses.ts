/**
 * Where a notification may be sent (decision 0040): the outbound rules of lookups (decision 0010: never link-local or
 * a metadata service, the connection pinned to the checked address, no redirects) plus loopback and private ranges,
 * refused unless the workspace allows them (Settings → Notifications), since a notification goes out unasked.
 */
import { isIP } from "node:net";
import { blockedAddressReason, blockedTargetReason, parseV6, systemResolver, type Resolver } from "../web/outbound";

function v4Private(b: number[]): string | null {
  const [a, c] = [b[0]!, b[1]!];
  if (a === 127) return "a loopback address";
  if (a === 0) return "an unspecified address";
  if (a === 10 || (a === 172 && c >= 16 && c <= 31) || (a === 192 && c === 168)) return "a private address";
  if (a === 100 && c >= 64 && c <= 127) return "a shared (carrier-grade NAT) address";
  return null;
}

/** Why `address` (v4 or v6) is loopback or private, or null. IPv4-mapped IPv6 is judged by its IPv4 address. */
export function privateAddressReason(address: string): string | null {
  if (isIP(address) === 4) return v4Private(address.split(".").map(Number));
  const b = parseV6(address);
  if (!b) return null;
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4Private(b.slice(12));
  if (zeros(0, 15) && (b[15] === 1 || b[15] === 0))
    return b[15] === 1 ? "a loopback address" : "an unspecified address";
  if ((b[0]! & 0xfe) === 0xfc) return "a private (unique local) address";
  return null;
}

/**
 * Why a notification may not go to `url`, or null: not HTTPS, credentials in it, a refused address as written, a name
 * that resolves to one (every address it resolves to is checked).
 */
export async function endpointUrlReason(
  url: URL,
  { allowPrivate, resolve = systemResolver }: { allowPrivate: boolean; resolve?: Resolver },
): Promise<string | null> {
  if (url.protocol !== "https:") return "the url must use https://";
  const literal = blockedTargetReason(url);
  if (literal) return `${url.hostname} is ${literal}`;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await resolve(host)).map((a) => a.address);
    } catch {
      return `${host} does not resolve`;
    }
    if (!addresses.length) return `${host} does not resolve`;
  }
  for (const a of addresses) {
    const why = blockedAddressReason(a) ?? (allowPrivate ? null : privateAddressReason(a));
    if (why) {
      const allow = allowPrivate
        ? ""
        : " (an owner or admin may allow loopback and private addresses under Settings → Notifications)";
      return `${host === a ? host : `${host} resolves to ${a}, which`} is ${why}${allow}`;
    }
  }
  return null;
}
