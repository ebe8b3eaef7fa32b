/**
 * Outbound calls (lib/domain/web/outbound.ts): every spelling of a link-local or metadata address is refused, and
 * the connection goes to the address that was checked — with a resolver that answers differently the second
 * time (DNS rebinding), the call still reaches the first, checked answer and resolves only once. Uses a server
 * on 127.0.0.1 only.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockedAddressReason, blockedTargetReason, outboundGet, type Resolver } from "@/lib/domain/web/outbound";

describe("addresses no call may reach", () => {
  it.each([
    "169.254.169.254",
    "169.254.0.1",
    "100.100.100.200",
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "::169.254.169.254",
    "::a9fe:a9fe",
    "::ffff:0:169.254.169.254",
    "64:ff9b::169.254.169.254",
    "64:ff9b:1::a9fe:a9fe",
    "2002:a9fe:a9fe::1",
    "2001:0:a9fe:a9fe::1",
    "2001:0:4136:e378:8000:63bf:5601:5601",
    "fe80::1",
    "fe80::1%eth0",
    "febf:ffff::1",
    "fd00:ec2::254",
  ])("refuses %s", (address) => {
    expect(blockedAddressReason(address)).not.toBeNull();
  });

  it.each([
    "127.0.0.1",
    "::1",
    "10.0.0.5",
    "192.168.1.10",
    "::ffff:127.0.0.1",
    "fd00::1",
    "2001:db8::1",
    "64:ff9b::a01:101",
    "fec0::1",
  ])("allows %s", (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });

  it.each([
    "http://[::169.254.169.254]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:0:a9fe:a9fe]/",
    "http://[2002:a9fe:a9fe::]/",
    "http://2852039166/",
    "http://0251.0376.0251.0376/",
    "http://0xa9.0xfe.0xa9.0xfe/",
    "http://169.254.169.254./",
    "http://[fd00:ec2::254]/latest",
    "http://metadata/computeMetadata/v1/",
  ])("refuses the URL %s as written", (url) => {
    expect(blockedTargetReason(new URL(url))).not.toBeNull();
  });
});

describe("outboundGet", () => {
  let server: http.Server;
  let port = 0;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits += 1;
      if (req.url?.startsWith("/big")) {
        res.end("x".repeat(10_000));
        return;
      }
      if (req.url?.startsWith("/slow")) return; // never answers
      if (req.url?.startsWith("/redirect")) {
        res.writeHead(302, { location: "http://169.254.169.254/" }).end();
        return;
      }
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ found: true, external_operation_id: "op-1" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A resolver that answers `first` once, then `later` (a name rebinding between check and connect). */
  const rebinding = (first: string, later: string): Resolver & { calls: number } => {
    const r = Object.assign(
      async () => {
        r.calls += 1;
        return [{ address: r.calls === 1 ? first : later, family: 4 }];
      },
      { calls: 0 },
    );
    return r;
  };

  it("connects to the address it checked, resolving the name once, when the name rebinds to a metadata address", async () => {
    const resolve = rebinding("127.0.0.1", "169.254.169.254");
    const before = hits;
    const res = await outboundGet(new URL(`http://records.test:${port}/lookup`), {
      timeoutMs: 5000,
      maxBytes: 1000,
      resolve,
    });
    expect(res).toEqual({ kind: "answer", status: 200, text: '{"found":true,"external_operation_id":"op-1"}' });
    expect(resolve.calls).toBe(1);
    expect(hits).toBe(before + 1);
  });

  it("refuses without connecting when the first answer is a metadata address", async () => {
    const resolve = rebinding("169.254.169.254", "127.0.0.1");
    const before = hits;
    const res = await outboundGet(new URL(`http://records.test:${port}/lookup`), {
      timeoutMs: 5000,
      maxBytes: 1000,
      resolve,
    });
    expect(res.kind).toBe("refused");
    expect(res.kind === "refused" && res.reason).toContain("169.254.169.254");
    expect(hits).toBe(before);
  });

  it("refuses when any address of the name is refused (an IPv4-compatible IPv6 one included)", async () => {
    const resolve: Resolver = async () => [
      { address: "127.0.0.1", family: 4 },
      { address: "::a9fe:a9fe", family: 6 },
    ];
    const res = await outboundGet(new URL(`http://records.test:${port}/lookup`), {
      timeoutMs: 5000,
      maxBytes: 1000,
      resolve,
    });
    expect(res.kind).toBe("refused");
  });

  it("refuses a literal metadata address without resolving anything", async () => {
    const resolve = rebinding("127.0.0.1", "127.0.0.1");
    const res = await outboundGet(new URL("http://[::ffff:169.254.169.254]/latest"), {
      timeoutMs: 5000,
      maxBytes: 1000,
      resolve,
    });
    expect(res.kind).toBe("refused");
    expect(resolve.calls).toBe(0);
  });

  it("does not follow redirects, caps the answer and times out", async () => {
    const resolve: Resolver = async () => [{ address: "127.0.0.1", family: 4 }];
    const redirect = await outboundGet(new URL(`http://records.test:${port}/redirect`), {
      timeoutMs: 5000,
      maxBytes: 1000,
      resolve,
    });
    expect(redirect).toMatchObject({ kind: "answer", status: 302 });
    expect(
      await outboundGet(new URL(`http://records.test:${port}/big`), { timeoutMs: 5000, maxBytes: 1000, resolve }),
    ).toMatchObject({ kind: "answer", text: null });
    expect(
      await outboundGet(new URL(`http://records.test:${port}/slow`), { timeoutMs: 300, maxBytes: 1000, resolve }),
    ).toEqual({ kind: "timeout" });
  });
});
