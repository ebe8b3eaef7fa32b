/**
 * Standard Webhooks helpers (decision 0040): sealed secrets open only under their key and binding; the loopback and
 * private address rule of notification endpoints; the Slack-compatible body carries the payload's fields and link.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { privateAddressReason } from "@/lib/domain/notifications/addresses";
import { slackMessage } from "@/lib/domain/notifications/format";
import { newWebhookSecret, openSecret, sealSecret } from "@/lib/domain/webhooks/seal";

describe("sealed webhook secrets", () => {
  it("open under the same key and binding only", () => {
    const key = randomBytes(32);
    const secret = newWebhookSecret();
    const sealed = sealSecret(key, "t1:webhook_source:billing", secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(openSecret(key, "t1:webhook_source:billing", sealed)).toBe(secret);
    expect(openSecret(key, "t2:webhook_source:billing", sealed)).toBeNull();
    expect(openSecret(randomBytes(32), "t1:webhook_source:billing", sealed)).toBeNull();
    // One byte of the ciphertext changed (decoded and encoded again: a changed last base64 character may only touch
    // padding bits, which decoding ignores).
    const [v, iv, tag, ct] = sealed.split(".");
    const bytes = Buffer.from(ct!, "base64url");
    bytes[0] = bytes[0]! ^ 0x01;
    expect(
      openSecret(key, "t1:webhook_source:billing", [v, iv, tag, bytes.toString("base64url")].join(".")),
    ).toBeNull();
  });

  it("are secrets the standardwebhooks package signs and verifies with", () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const at = new Date();
    const body = '{"type":"operation.outcome"}';
    const signature = new Webhook(secret).sign("msg_1", at, body);
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signature,
    };
    expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });
});

describe("privateAddressReason", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.9.9.9", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "carrier-grade"],
    ["0.0.0.0", "unspecified"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fc00::1", "unique local"],
    ["fd12:3456::1", "unique local"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:127.0.0.1", "loopback"],
  ])("%s is refused (%s)", (ip, kind) => {
    expect(privateAddressReason(ip)).toContain(kind);
  });

  it.each(["8.8.8.8", "172.32.0.1", "192.169.0.1", "100.128.0.1", "2001:db8::1", "::ffff:8.8.8.8"])(
    "%s is public",
    (ip) => {
      expect(privateAddressReason(ip)).toBeNull();
    },
  );
});

describe("slackMessage", () => {
  it("names the event and its fields, escapes Slack's control characters, and links to the dashboard", () => {
    const m = slackMessage({
      type: "side_effect.unknown",
      timestamp: "2026-12-02T09:00:00Z",
      data: {
        task_id: "case-<1>",
        side_effect: "refund",
        reason: "attempt_ended",
        link: "https://custody.example/tasks/x",
      },
    });
    expect(m.text).toBe("Write outcome unknown — task case-&lt;1&gt;");
    expect(JSON.stringify(m.blocks)).toContain("*side_effect*: refund");
    expect(JSON.stringify(m.blocks)).toContain("<https://custody.example/tasks/x|Open in Run Custody>");
  });
});
