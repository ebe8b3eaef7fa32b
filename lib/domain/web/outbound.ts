/**
 * Calls the server makes to addresses people registered (tool owners' lookup endpoints), made so that they can
 * never reach a link-local address or a cloud metadata service (decision 0010):
 * - the host name is resolved once, every address it resolves to is checked, and the connection goes to one of
 *   the addresses that were checked (a `lookup` function on the request), so a name that answers differently the
 *   second time (DNS rebinding) cannot slip past the check;
 * - every spelling of a refused address is refused: IPv4 169.254.0.0/16 and the metadata addresses, their
 *   IPv4-mapped, IPv4-compatible and IPv4-translated IPv6 forms, NAT64, 6to4 and Teredo embeddings, fe80::/10 and
 *   fd00:ec2::254; decimal, octal and hex IPv4 forms are normalized by the URL parser before the check;
 * - no redirect is followed, no connection is reused, the answer is capped in size and time.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";

/** Resolves a host name to its addresses (the system resolver by default; tests pass their own). */
export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/** Host names under which clouds serve instance metadata. */
const METADATA_NAMES = ["metadata.google.internal", "metadata", "instance-data", "metadata.goog"];

/** IPv4 addresses of metadata services outside 169.254.0.0/16 (Alibaba Cloud). */
const METADATA_V4 = new Set(["100.100.100.200"]);

function parseV4(ip: string): number[] | null {
  const parts = ip.split(".");
  if (parts.length !== 4) return null;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null;
}

/** The 16 bytes of an IPv6 address (zone id ignored), or null. */
export function parseV6(input: string): number[] | null {
  const ip = input.replace(/%.*$/, "");
  if (isIP(ip) !== 6) return null;
  let tail: number[] = [];
  let head = ip;
  const lastColon = ip.lastIndexOf(":");
  if (ip.slice(lastColon + 1).includes(".")) {
    const v4 = parseV4(ip.slice(lastColon + 1));
    if (!v4) return null;
    tail = v4;
    head = ip[lastColon - 1] === ":" ? ip.slice(0, lastColon + 1) : ip.slice(0, lastColon);
  }
  const [left, right] = head.includes("::") ? head.split("::") : [head, null];
  const hextets = (s: string | null | undefined) => (s ? s.split(":").filter((x) => x !== "") : []);
  const l = hextets(left);
  const r = hextets(right);
  const missing = 8 - tail.length / 2 - l.length - r.length;
  const groups = [...l, ...(right === null ? [] : new Array<string>(missing).fill("0")), ...r];
  const bytes: number[] = [];
  for (const g of groups) {
    const v = parseInt(g, 16);
    bytes.push(v >> 8, v & 0xff);
  }
  bytes.push(...tail);
  return bytes.length === 16 ? bytes : null;
}

function v4Reason(b: number[]): string | null {
  if (b[0] === 169 && b[1] === 254) return "a link-local address, where cloud metadata services answer";
  if (METADATA_V4.has(b.join("."))) return "a cloud metadata address";
  return null;
}

/** fd00:ec2::254, byte by byte. */
const AWS_METADATA_V6 = [0xfd, 0, 0x0e, 0xc2, ...new Array<number>(10).fill(0), 0x02, 0x54].join(",");

const zeros = (b: number[], from: number, to: number) => b.slice(from, to).every((x) => x === 0);

/**
 * Why no outbound call may go to this IP address (v4 or v6), or null when it may. IPv6 forms that carry an IPv4
 * address are judged by that address.
 */
export function blockedAddressReason(address: string): string | null {
  const v4 = parseV4(address);
  if (v4) return v4Reason(v4);
  const b = parseV6(address);
  if (!b) return null;
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return "an IPv6 link-local address (fe80::/10)";
  if (b.join(",") === AWS_METADATA_V6) {
    return "a cloud metadata address (fd00:ec2::254)";
  }
  const lastV4 = b.slice(12, 16);
  const embedded: number[][] = [];
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) embedded.push(lastV4); // ::ffff:a.b.c.d (mapped)
  if (zeros(b, 0, 12)) embedded.push(lastV4); // ::a.b.c.d (compatible)
  if (zeros(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(b, 10, 12)) embedded.push(lastV4); // ::ffff:0:a.b.c.d (translated)
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) embedded.push(lastV4); // 64:ff9b::/96 and 64:ff9b:1::/48 (NAT64)
  if (b[0] === 0x20 && b[1] === 0x02) embedded.push(b.slice(2, 6)); // 2002::/16 (6to4)
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) {
    embedded.push(
      b.slice(4, 8),
      lastV4.map((x) => x ^ 0xff),
    ); // 2001::/32 (Teredo: server, and the obscured client)
  }
  for (const e of embedded) {
    const why = v4Reason(e);
    if (why) return `${why} (as IPv6 ${address})`;
  }
  return null;
}

/**
 * Why no outbound call may go to this URL's host as written (an IP literal or a metadata host name), or null.
 * Names that resolve to a refused address are caught when the call resolves them ({@link outboundGet}).
 */
export function blockedTargetReason(url: URL): string | null {
  const host = url.hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "");
  if (isIP(host)) return blockedAddressReason(host);
  if (METADATA_NAMES.includes(host) || host.startsWith("instance-data.")) return "a cloud metadata host name";
  return null;
}

export type OutboundResult =
  | { kind: "answer"; status: number; text: string | null; location?: string }
  | { kind: "refused"; reason: string }
  | { kind: "timeout" }
  | { kind: "error"; message: string };

class RefusedAddress extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * `GET url` with the checks above.
 * @param opts.timeoutMs the whole call, connection to last byte; `maxBytes` caps the answer (`text: null` beyond it).
 * @returns the status and body text, or why it was refused, or that it timed out or failed.
 */
export function outboundGet(
  url: URL,
  opts: { timeoutMs: number; maxBytes: number; resolve?: Resolver; headers?: Record<string, string> },
): Promise<OutboundResult> {
  return outboundCall(url, { ...opts, method: "GET" });
}

/**
 * A call with the checks above: `GET`, or `POST` with a body (notification deliveries, decision 0040). `refuse` adds
 * a rule for the resolved addresses (notification endpoints refuse loopback and private ones unless the workspace
 * allows them); `location` is the answer's `Location` header, so a caller can say where a refused redirect pointed.
 */
export function outboundCall(
  url: URL,
  opts: {
    timeoutMs: number;
    maxBytes: number;
    resolve?: Resolver;
    headers?: Record<string, string>;
    method: "GET" | "POST";
    body?: string;
    refuse?: (address: string) => string | null;
  },
): Promise<OutboundResult> {
  const literal = blockedTargetReason(url);
  if (literal) return Promise.resolve({ kind: "refused", reason: `${url.hostname} is ${literal}` });
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return Promise.resolve({ kind: "error", message: `unsupported scheme ${url.protocol}` });
  const resolve = opts.resolve ?? systemResolver;

  // The only resolution of the name: the connection goes to an address checked here.
  const lookup = ((
    hostname: string,
    options: { all?: boolean; family?: number },
    callback: (...args: unknown[]) => void,
  ) => {
    resolve(hostname).then(
      (addresses) => {
        for (const a of addresses) {
          const why = blockedAddressReason(a.address) ?? opts.refuse?.(a.address) ?? null;
          if (why) return callback(new RefusedAddress(`${hostname} resolves to ${a.address}, ${why}`));
        }
        const wanted =
          options.family === 4 || options.family === 6
            ? addresses.filter((a) => a.family === options.family)
            : addresses;
        if (!wanted.length)
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }));
        if (options.all) return callback(null, wanted);
        return callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as unknown as LookupFunction;

  return new Promise((done) => {
    let settled = false;
    const finish = (r: OutboundResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(r);
    };
    const mod = url.protocol === "https:" ? https : http;
    const req = mod.request(url, { method: opts.method, headers: opts.headers, lookup, agent: false }, (res) => {
      const location = typeof res.headers.location === "string" ? { location: res.headers.location } : {};
      const chunks: Buffer[] = [];
      let size = 0;
      let tooLarge = false;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) {
          tooLarge = true;
          res.destroy();
          finish({ kind: "answer", status: res.statusCode ?? 0, text: null, ...location });
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () =>
        finish({
          kind: "answer",
          status: res.statusCode ?? 0,
          text: tooLarge ? null : Buffer.concat(chunks).toString("utf8"),
          ...location,
        }),
      );
      res.on("error", (err) => finish({ kind: "error", message: err.message }));
    });
    req.on("error", (err) =>
      finish(
        err instanceof RefusedAddress
          ? { kind: "refused", reason: err.reason }
          : { kind: "error", message: err.message },
      ),
    );
    const timer = setTimeout(() => {
      finish({ kind: "timeout" });
      req.destroy();
    }, opts.timeoutMs);
    req.end(opts.body);
  });
}
