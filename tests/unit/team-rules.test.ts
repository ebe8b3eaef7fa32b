/**
 * Pure rules behind members and sign-in: the throttle's growing delays, the client address the throttle keys on,
 * what a new password must be, the owner-role rule, and the permissions table as Settings shows it.
 */
import { describe, expect, it } from "vitest";
import { ROLES } from "@/db/schema/enums";
import { PERMISSIONS, permissionMatrix, type Actor } from "@/lib/domain/authz";
import { isDomainError } from "@/lib/domain/errors";
import { assertMayTouchOwnerRole } from "@/lib/domain/tenancy/member-rules";
import { MIN_PASSWORD_LENGTH, weakPasswordReason } from "@/lib/domain/tenancy/passwords";
import {
  FREE_SIGN_IN_FAILURES,
  MAX_SIGN_IN_DELAY_SECONDS,
  MAX_SIGN_IN_FAILURES,
  signInDelaySeconds,
} from "@/lib/domain/tenancy/sign-in-limits";
import { throttleMessage } from "@/lib/domain/tenancy/sign-in-throttle";
import { clientAddress, trustedProxyHops } from "@/lib/server/client-address";

describe("sign-in delays", () => {
  it("cost nothing for the first free failures, then double up to the cap", () => {
    const delays = Array.from({ length: 14 }, (_, i) => signInDelaySeconds(i + 1));
    expect(delays.slice(0, FREE_SIGN_IN_FAILURES)).toEqual(Array(FREE_SIGN_IN_FAILURES).fill(0));
    expect(delays.slice(FREE_SIGN_IN_FAILURES, FREE_SIGN_IN_FAILURES + 4)).toEqual([1, 2, 4, 8]);
    for (let i = 1; i < delays.length; i++) expect(delays[i]!).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(Math.max(...delays)).toBe(MAX_SIGN_IN_DELAY_SECONDS);
    // Before the lock, waits add up to minutes, not hours.
    const beforeLock = delays.slice(0, MAX_SIGN_IN_FAILURES - 1).reduce((a, b) => a + b, 0);
    expect(beforeLock).toBeGreaterThan(60);
    expect(beforeLock).toBeLessThan(15 * 60);
  });

  it("say how long to wait, in seconds or minutes, and how to get unlocked", () => {
    expect(throttleMessage({ ok: false, kind: "delay", retryAfterSeconds: 1 })).toBe(
      "Too many failed sign-ins in a row for this email: wait 1 second before the next try.",
    );
    expect(throttleMessage({ ok: false, kind: "delay", retryAfterSeconds: 8 })).toContain("wait 8 seconds");
    const locked = throttleMessage({ ok: false, kind: "locked", retryAfterSeconds: 14 * 60 + 5 });
    expect(locked).toContain("Try again in 15 minutes");
    expect(locked).toContain("Settings → Members");
  });
});

describe("the client address", () => {
  it("is the socket's peer when no proxy is configured, whatever X-Forwarded-For says", () => {
    const forged = new Headers({ "x-forwarded-for": "203.0.113.9" });
    expect(clientAddress(forged, 0, "198.51.100.4")).toBe("198.51.100.4");
    expect(clientAddress({ "x-forwarded-for": "1.2.3.4, 5.6.7.8" }, 0, "::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(clientAddress(new Headers(), 0, "::1")).toBe("::1");
    expect(clientAddress(forged, 0, undefined)).toBe("unknown");
  });

  it("behind N proxies is the N-th X-Forwarded-For entry from the end, never past the first, normalised", () => {
    expect(clientAddress(new Headers({ "x-forwarded-for": "203.0.113.9" }), 1, "10.0.0.1")).toBe("203.0.113.9");
    expect(clientAddress(new Headers({ "x-forwarded-for": "1.2.3.4, 198.51.100.2" }), 1)).toBe("198.51.100.2");
    expect(clientAddress({ "x-forwarded-for": "::ffff:127.0.0.1" }, 1)).toBe("127.0.0.1");
    expect(clientAddress({ "x-forwarded-for": "[2001:DB8::1]:443" }, 1)).toBe("2001:db8::1");
    const h = new Headers({ "x-forwarded-for": "198.51.100.7, 10.0.0.2, 10.0.0.1" });
    expect(clientAddress(h, 2)).toBe("10.0.0.2");
    expect(clientAddress(h, 3)).toBe("198.51.100.7");
    expect(clientAddress(h, 9)).toBe("198.51.100.7");
    // No header at all behind a proxy: the peer (the proxy added nothing).
    expect(clientAddress(new Headers(), 1, "10.0.0.3")).toBe("10.0.0.3");
  });

  it("reads the proxy count from CUSTODY_TRUSTED_PROXY_HOPS: a whole number, anything else is 0", () => {
    expect(trustedProxyHops(undefined)).toBe(0);
    expect(trustedProxyHops("")).toBe(0);
    expect(trustedProxyHops("2")).toBe(2);
    expect(trustedProxyHops("-1")).toBe(0);
    expect(trustedProxyHops("1.5")).toBe(0);
    expect(trustedProxyHops("two")).toBe(0);
  });

  it("is `unknown` when missing or not an address (never the all-sources key `*`)", () => {
    expect(clientAddress(new Headers(), 0, undefined)).toBe("unknown");
    expect(clientAddress({ "x-forwarded-for": "*" }, 1)).toBe("unknown");
    expect(clientAddress({ "x-forwarded-for": "evil'; drop table" }, 1)).toBe("unknown");
    expect(clientAddress({}, 0, "*")).toBe("unknown");
  });
});

describe("new passwords", () => {
  it(`need ${MIN_PASSWORD_LENGTH}–256 characters, not only spaces, not the email`, () => {
    expect(weakPasswordReason("x".repeat(MIN_PASSWORD_LENGTH - 1))).toMatch(/too short \(11 characters\)/);
    expect(weakPasswordReason("correct horse battery")).toBeNull();
    expect(weakPasswordReason(" ".repeat(20))).toBe("must not be only spaces");
    expect(weakPasswordReason("x".repeat(257))).toMatch(/too long/);
    expect(weakPasswordReason("Ada@Example.test", "ada@example.test")).toBe("must not be your email address");
    // Characters, not UTF-16 units: twelve emoji are twelve characters.
    expect(weakPasswordReason("🔑".repeat(12))).toBeNull();
  });
});

describe("the owner role", () => {
  const as = (role: (typeof ROLES)[number]): Actor => ({ kind: "user", tenantId: "t", userId: "u", email: "e", role });
  const refusal = (f: () => void) => {
    try {
      f();
      return null;
    } catch (err) {
      return isDomainError(err) ? err.code : "other";
    }
  };

  it("is granted, changed or removed only by an owner (or setup)", () => {
    expect(refusal(() => assertMayTouchOwnerRole(as("admin"), { to: "owner" }, "x"))).toBe("not_allowed");
    expect(refusal(() => assertMayTouchOwnerRole(as("admin"), { from: "owner", to: "viewer" }, "x"))).toBe(
      "not_allowed",
    );
    expect(refusal(() => assertMayTouchOwnerRole(as("admin"), { from: "owner" }, "x"))).toBe("not_allowed");
    expect(refusal(() => assertMayTouchOwnerRole(as("admin"), { from: "viewer", to: "admin" }, "x"))).toBeNull();
    expect(refusal(() => assertMayTouchOwnerRole(as("owner"), { from: "owner", to: "viewer" }, "x"))).toBeNull();
    expect(
      refusal(() => assertMayTouchOwnerRole({ kind: "system", tenantId: "t", label: "setup" }, { to: "owner" }, "x")),
    ).toBeNull();
  });
});

describe("the permissions table as Settings shows it", () => {
  it("has one row per action, in the table's order, with the same rules", () => {
    const rows = permissionMatrix();
    expect(rows.map((r) => r.action)).toEqual(Object.keys(PERMISSIONS));
    for (const r of rows) {
      expect(r.phrase.length).toBeGreaterThan(5);
      expect(r.runtime).toBe(PERMISSIONS[r.action].runtime);
      expect(r.roles).toEqual(PERMISSIONS[r.action].roles);
    }
    const manage = rows.find((r) => r.action === "members.manage")!;
    expect([...manage.roles].sort()).toEqual(["admin", "owner"]);
    expect(manage.runtime).toBe(false);
  });
});
