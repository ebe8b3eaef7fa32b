/**
 * Standard Webhooks in and out (decision 0040), through the built server and real PostgreSQL.
 *
 * In: sources are managed by owners and admins only; a message signed with the `standardwebhooks` package settles an
 * unknown effect when the source is trusted for its action (the source named as the reconciler in the audit log) and
 * is kept as evidence otherwise; a replayed `webhook-id` stores nothing twice; a bad signature, an old timestamp, an
 * unknown source, missing headers and an oversized body store nothing; a rotation keeps both secrets valid until the
 * old one is removed.
 *
 * Out: endpoints are refused with the reason (not HTTPS, loopback or private unless allowed, link-local always, a
 * redirect); a local HTTPS receiver (a self-signed certificate made here with openssl, trusted by the test's own
 * servers through NODE_EXTRA_CA_CERTS) gets each event once across a kill of the server in the middle of a delivery
 * and a restart, every delivery signed and verified with the package, and the delivery log shows it; "send again"
 * sends under the same `webhook-id`.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { queryRows } from "@/db";
import { freePort, serverEnv, testServerSecrets } from "../support/env";
import { NextServer } from "../support/next-server";
import { checkpoint, intentBody, newKey, postIntent } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf } from "./support/responses";
import { unknownEffect } from "./support/seeding";
import { auditRows, effectRow } from "./support/stored-rows";
import { waitFor } from "./support/waiting";
import { api, baseUrl, createTestTenant, newTaskId, signIn, testDbForFile, type FullTestTenant } from "./helpers";

const handle = testDbForFile();

async function countRows(table: "webhook_messages" | "webhook_sources" | "notification_endpoints", tenantId: string) {
  const [row] = await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from ${sql.identifier(table)} where tenant_id = ${tenantId}`,
  );
  return row!.n;
}

/** Sends a Standard Webhooks message to the server, signed with `secret` (or with the headers given). */
async function sendWebhook(
  source: string,
  secret: string,
  body: unknown,
  opts: { id?: string; at?: Date; headers?: Record<string, string>; raw?: string } = {},
) {
  const text = opts.raw ?? JSON.stringify(body);
  const id = opts.id ?? `msg_${newKey("wh")}`;
  const at = opts.at ?? new Date();
  const headers = opts.headers ?? {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, text),
  };
  const res = await fetch(`${baseUrl()}/api/v1/webhooks/${source}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: text,
  });
  const raw = await res.text();
  return { status: res.status, body: JSON.parse(raw) as Record<string, unknown>, text: raw, id };
}

const outcome = (key: string, over: Record<string, unknown> = {}) => ({
  type: "operation.outcome",
  data: { idempotency_key: key, outcome: "applied", external_operation_id: "op-77", ...over },
});

describe("webhook sources (Settings → Webhooks)", () => {
  let t: FullTestTenant;
  let other: FullTestTenant;
  let owner: { cookie: string };
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    other = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
  });

  it("only owners and admins create, rotate and remove; other roles and runtime keys get 403 and nothing is stored", async () => {
    for (const role of ["viewer", "responder", "approver"] as const) {
      const res = await api(await signInAs(t, role)).post("/api/v1/settings/webhook-sources", { name: `by-${role}` });
      expect(res.status, res.text).toBe(403);
    }
    const byKey = await api(t.apiKey).post("/api/v1/settings/webhook-sources", { name: "by-key" });
    expect(byKey.status).toBe(403);
    expect(await countRows("webhook_sources", t.tenantId)).toBe(0);
    const admin = await api(await signInAs(t, "admin")).post("/api/v1/settings/webhook-sources", { name: "by-admin" });
    expect(admin.status, admin.text).toBe(200);
    // Everyone signed in reads the list, which never holds a secret.
    const list = await api(await signInAs(t, "viewer")).get<{ sources: Array<Record<string, unknown>> }>(
      "/api/v1/settings/webhook-sources",
    );
    expect(list.status).toBe(200);
    expect(list.text).not.toContain("whsec_");
    expect(list.body.sources.map((s) => s.name)).toEqual(["by-admin"]);
  });

  it("refuses bad names and fields with 422 naming the field, and a taken name with 409; nothing stored", async () => {
    const before = await countRows("webhook_sources", t.tenantId);
    for (const [body, field] of [
      [{ name: "Has Spaces" }, "name"],
      [{ name: "" }, "name"],
      [{ name: "x".repeat(65) }, "name"],
      [{ name: "ok", trusted_actions: "refund" }, "trusted_actions"],
      [{ name: "ok", trusted_actions: ["réfund"] }, "trusted_actions.0"],
      [{ name: "ok", extra: 1 }, ""],
    ] as const) {
      const res = await api(owner).post("/api/v1/settings/webhook-sources", body);
      expect(res.status, res.text).toBe(422);
      const fields = (errorOf(res).details as { fields: Array<{ path: string }> }).fields.map((f) => f.path);
      expect(fields).toContain(field);
    }
    expect(await countRows("webhook_sources", t.tenantId)).toBe(before);
    expect((await api(owner).post("/api/v1/settings/webhook-sources", { name: "dupe" })).status).toBe(200);
    expect((await api(owner).post("/api/v1/settings/webhook-sources", { name: "dupe" })).status).toBe(409);
  });

  it("keeps tenants apart: another workspace cannot rotate or delete this one's source, and may use the same name", async () => {
    const mine = await api(owner).post<{ secret: string }>("/api/v1/settings/webhook-sources", { name: "shared-name" });
    expect(mine.status).toBe(200);
    const theirs = await signInAs(other, "owner");
    expect((await api(theirs).post("/api/v1/settings/webhook-sources/shared-name/secrets", undefined)).status).toBe(
      404,
    );
    expect((await api(theirs).delete("/api/v1/settings/webhook-sources/shared-name")).status).toBe(404);
    const same = await api(theirs).post<{ secret: string }>("/api/v1/settings/webhook-sources", {
      name: "shared-name",
    });
    expect(same.status, same.text).toBe(200);
    // Each workspace's secret verifies for its own source only: the other's unknown key is no message of this one.
    const effect = await unknownEffect(handle.db, t, { tool: "billing.refund" });
    const res = await sendWebhook("shared-name", same.body.secret, outcome(effect.key));
    expect(res.status, res.text).toBe(200);
    expect(res.body.disposition).toBe("unmatched");
    expect(await countRows("webhook_messages", t.tenantId)).toBe(0);
    expect((await effectRow(handle.db, t.tenantId, effect.taskId, effect.name))?.status).toBe("unknown");
  });
});

describe("POST /api/v1/webhooks/{source}", () => {
  let t: FullTestTenant;
  let owner: { cookie: string };
  let trusted: string;
  let untrusted: string;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
    const a = await api(owner).post<{ secret: string; name: string }>("/api/v1/settings/webhook-sources", {
      name: "billing",
      trusted_actions: ["Records.Update"],
    });
    expect(a.status, a.text).toBe(200);
    expect(a.body.secret).toMatch(/^whsec_/);
    trusted = a.body.secret;
    const b = await api(owner).post<{ secret: string }>("/api/v1/settings/webhook-sources", { name: "crm" });
    untrusted = b.body.secret;
    // The secret is sealed at rest: the stored value is not the secret.
    const stored = await queryRows<{ sealed: string }>(
      handle.db,
      sql`select sealed from webhook_source_secrets where tenant_id = ${t.tenantId}`,
    );
    expect(stored).toHaveLength(2);
    for (const s of stored) {
      expect(s.sealed).not.toContain(trusted.slice(6));
      expect(s.sealed).not.toContain(untrusted.slice(6));
    }
  });

  it("a trusted source settles an unknown effect through the reconcile verb, named as the reconciler; a replay stores nothing twice", async () => {
    const effect = await unknownEffect(handle.db, t);
    const res = await sendWebhook("billing", trusted, outcome(effect.key, { result_digest: "sha256:abc" }));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      duplicate: false,
      disposition: "settled",
      side_effect: { task_id: effect.taskId, name: effect.name, status: "completed" },
    });
    const row = await effectRow(handle.db, t.tenantId, effect.taskId, effect.name);
    expect(row?.status).toBe("completed");
    const audit = (await auditRows(handle.db, t.tenantId, "side_effect.reconciled")).filter(
      (a) => a.target === `side_effect:${effect.taskId}/${effect.name}`,
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_kind: "system", actor_label: "webhook:billing" });
    expect(audit[0]!.details).toMatchObject({ outcome: "completed", external_operation_id: "op-77" });

    const again = await sendWebhook("billing", trusted, outcome(effect.key), { id: res.id });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true, disposition: "settled" });
    expect(await countRows("webhook_messages", t.tenantId)).toBe(1);
    expect(
      (await auditRows(handle.db, t.tenantId, "side_effect.reconciled")).filter(
        (a) => a.target === `side_effect:${effect.taskId}/${effect.name}`,
      ),
    ).toHaveLength(1);
  });

  it("an untrusted source's report is evidence only: the effect stays unknown and the report is listed for the reconcile dialog", async () => {
    const effect = await unknownEffect(handle.db, t);
    const res = await sendWebhook("crm", untrusted, outcome(effect.key, { external_operation_id: "op-crm-1" }));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ disposition: "evidence", side_effect: { status: "unknown" } });
    expect((await effectRow(handle.db, t.tenantId, effect.taskId, effect.name))?.status).toBe("unknown");
    const reports = await api(await signInAs(t, "responder")).get<{ reports: Array<Record<string, unknown>> }>(
      `/api/v1/tasks/${effect.taskId}/side-effects/${effect.name}/webhook-reports`,
    );
    expect(reports.status, reports.text).toBe(200);
    expect(reports.body.reports).toEqual([
      expect.objectContaining({
        source: "crm",
        webhook_id: res.id,
        outcome: "applied",
        external_operation_id: "op-crm-1",
        disposition: "evidence",
      }),
    ]);
    // Another workspace sees no such effect.
    const theirs = await createTestTenant(handle.db);
    const cross = await api(theirs.apiKey).get(
      `/api/v1/tasks/${effect.taskId}/side-effects/${effect.name}/webhook-reports`,
    );
    expect(cross.status).toBe(404);
  });

  it("refuses a bad signature, an old or future timestamp, an unknown source, missing headers, a bad body and an oversized one, storing nothing", async () => {
    const effect = await unknownEffect(handle.db, t);
    const before = await countRows("webhook_messages", t.tenantId);
    const body = outcome(effect.key);
    const wrongSecret = `whsec_${Buffer.from("not the secret at all, 24b").toString("base64")}`;
    const cases: Array<[string, Promise<{ status: number; text: string }>, number]> = [
      ["bad signature", sendWebhook("billing", wrongSecret, body), 401],
      ["old timestamp", sendWebhook("billing", trusted, body, { at: new Date(Date.now() - 6 * 60_000) }), 401],
      ["future timestamp", sendWebhook("billing", trusted, body, { at: new Date(Date.now() + 6 * 60_000) }), 401],
      ["unknown source", sendWebhook("no-such-source", trusted, body), 401],
      ["invalid source name", sendWebhook("Not%20A%20Name", trusted, body), 401],
      ["no headers", sendWebhook("billing", trusted, body, { headers: {} }), 400],
      [
        "malformed timestamp",
        sendWebhook("billing", trusted, body, {
          headers: { "webhook-id": "m1", "webhook-timestamp": "yesterday", "webhook-signature": "v1,x" },
        }),
        400,
      ],
      ["not json", sendWebhook("billing", trusted, null, { raw: "{not json" }), 400],
      [
        "wrong shape",
        sendWebhook("billing", trusted, { type: "operation.outcome", data: { idempotency_key: "short" } }),
        422,
      ],
      [
        "applied without operation",
        sendWebhook("billing", trusted, outcome(effect.key, { external_operation_id: undefined })),
        422,
      ],
      ["over the limit", sendWebhook("billing", trusted, { pad: "x".repeat(70 * 1024) }), 413],
    ];
    for (const [what, pending, status] of cases) {
      const res = await pending;
      expect(res.status, `${what}: ${res.text}`).toBe(status);
    }
    expect(await countRows("webhook_messages", t.tenantId)).toBe(before);
    expect((await effectRow(handle.db, t.tenantId, effect.taskId, effect.name))?.status).toBe("unknown");
  });

  it("rotation: the old and new secrets both verify until the old one is removed; the only secret cannot be removed", async () => {
    const created = await api(owner).post<{ secret: string; secret_id: string }>("/api/v1/settings/webhook-sources", {
      name: "rotating",
    });
    const oldSecret = created.body.secret;
    const rotated = await api(owner).post<{ secret: string; secret_id: string }>(
      "/api/v1/settings/webhook-sources/rotating/secrets",
      undefined,
    );
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).not.toBe(oldSecret);
    expect((await api(owner).post("/api/v1/settings/webhook-sources/rotating/secrets", undefined)).status).toBe(409);
    const effect = await unknownEffect(handle.db, t);
    expect((await sendWebhook("rotating", oldSecret, outcome(effect.key))).status).toBe(200);
    expect((await sendWebhook("rotating", rotated.body.secret, outcome(effect.key))).status).toBe(200);
    const removed = await api(owner).delete(
      `/api/v1/settings/webhook-sources/rotating/secrets/${created.body.secret_id}`,
    );
    expect(removed.status, removed.text).toBe(200);
    expect((await sendWebhook("rotating", oldSecret, outcome(effect.key))).status).toBe(401);
    expect((await sendWebhook("rotating", rotated.body.secret, outcome(effect.key))).status).toBe(200);
    const last = await api(owner).delete(`/api/v1/settings/webhook-sources/rotating/secrets/${rotated.body.secret_id}`);
    expect(last.status, last.text).toBe(409);
    const actions = (await auditRows(handle.db, t.tenantId)).map((a) => a.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        "webhook_source.created",
        "webhook_source.secret_rotated",
        "webhook_source.secret_removed",
      ]),
    );
    // No audit entry holds a secret.
    const audit = JSON.stringify(await auditRows(handle.db, t.tenantId));
    expect(audit).not.toContain(oldSecret.slice(6));
    expect(audit).not.toContain(rotated.body.secret.slice(6));
  });
});

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl in a temporary directory. */
function selfSignedCertificate(): { dir: string; key: string; cert: string; certFile: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-notify-tls-"));
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { stdio: "ignore" },
  );
  return { dir, key: fs.readFileSync(keyFile, "utf8"), cert: fs.readFileSync(certFile, "utf8"), certFile };
}

type Received = { id: string; event: string; verified: boolean; body: Record<string, unknown> };

describe("notifications out (Settings → Notifications)", () => {
  let tls: ReturnType<typeof selfSignedCertificate>;
  let receiver: https.Server;
  let receiverUrl: string;
  let server: NextServer;
  let t: FullTestTenant;
  let owner: { cookie: string };
  let endpointSecret = "";
  const received: Received[] = [];
  /** POSTs held without an answer (the first one, to be cut by the kill). */
  let holdNext = false;
  const held: Array<() => void> = [];

  beforeAll(async () => {
    tls = selfSignedCertificate();
    receiver = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      if (req.url === "/redirect") {
        res.writeHead(302, { location: "https://elsewhere.example/hook" }).end();
        return;
      }
      if (req.method !== "POST") {
        res.writeHead(405).end();
        return;
      }
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const headers = {
          "webhook-id": String(req.headers["webhook-id"]),
          "webhook-timestamp": String(req.headers["webhook-timestamp"]),
          "webhook-signature": String(req.headers["webhook-signature"]),
        };
        let verified = false;
        try {
          new Webhook(endpointSecret).verify(text, headers);
          verified = true;
        } catch {
          verified = false;
        }
        const body = JSON.parse(text) as Record<string, unknown>;
        received.push({ id: headers["webhook-id"], event: String(body.type), verified, body });
        if (holdNext) {
          holdNext = false;
          held.push(() => res.destroy());
          return;
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    const port = await freePort();
    const root = process.cwd();
    server = new NextServer({
      root,
      port,
      env: {
        ...serverEnv({ port, databaseUrl: inject("databaseUrl"), ...testServerSecrets() }),
        CUSTODY_NOTIFICATIONS: "on",
        CUSTODY_NOTIFY_POLL_MS: "200",
        CUSTODY_NOTIFY_LEASE_SECONDS: "3",
        NODE_EXTRA_CA_CERTS: tls.certFile,
      },
      logFile: path.join(root, "test-results", "notify-server.log"),
    });
    await server.start();
    t = await createTestTenant(handle.db);
    owner = { cookie: await signIn(t.users.owner.email, t.password, { base: server.baseUrl }) };
  });

  afterAll(async () => {
    await server?.stop();
    for (const cut of held) cut();
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    if (tls) fs.rmSync(tls.dir, { recursive: true, force: true });
  });

  const on = () => api(owner, server.baseUrl);

  it("refuses endpoints with the reason — not HTTPS, loopback or private unless allowed, link-local always, a redirect — and other roles", async () => {
    const refused = async (url: string, reason: RegExp) => {
      const res = await on().post("/api/v1/settings/notification-endpoints", { url, events: ["approval.requested"] });
      expect(res.status, res.text).toBe(422);
      expect(errorOf(res).message).toMatch(reason);
    };
    await refused("http://hooks.example.com/x", /https/);
    await refused(`${receiverUrl}/hook`, /127\.0\.0\.1 is a loopback address/);
    await refused("https://10.1.2.3/hook", /10\.1\.2\.3 is a private address/);
    await refused("https://[::1]/hook", /::1 is a loopback address/);
    const bad = await on().post("/api/v1/settings/notification-endpoints", {
      url: `${receiverUrl}/hook`,
      events: ["approval.nope"],
    });
    expect(bad.status).toBe(422);
    const format = await on().post("/api/v1/settings/notification-endpoints", {
      url: `${receiverUrl}/hook`,
      events: ["approval.requested"],
      format: "teams",
    });
    expect(format.status).toBe(422);

    const viewer = { cookie: await signIn(t.users.viewer.email, t.password, { base: server.baseUrl }) };
    expect(
      (await api(viewer, server.baseUrl).put("/api/v1/settings/notifications", { allow_private_addresses: true }))
        .status,
    ).toBe(403);
    const allow = await on().put("/api/v1/settings/notifications", { allow_private_addresses: true });
    expect(allow.status, allow.text).toBe(200);
    await refused("https://169.254.169.254/latest", /link-local/);
    await refused(`${receiverUrl}/redirect`, /redirects \(302 to https:\/\/elsewhere\.example\/hook\)/);
    const byViewer = await api(viewer, server.baseUrl).post("/api/v1/settings/notification-endpoints", {
      url: `${receiverUrl}/hook`,
      events: ["approval.requested"],
    });
    expect(byViewer.status).toBe(403);
    expect(await countRows("notification_endpoints", t.tenantId)).toBe(0);
  });

  it("delivers each event once across a kill in the middle of a delivery and a restart, signed, with the log showing it; send again reuses the webhook-id", async () => {
    const created = await on().post<{ id: string; secret: string }>("/api/v1/settings/notification-endpoints", {
      url: `${receiverUrl}/hook`,
      events: ["approval.requested", "side_effect.unknown"],
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.secret).toMatch(/^whsec_/);
    endpointSecret = created.body.secret;

    // The server is down when the facts are decided (by the suite's server, whose worker is off): they are queued in
    // the outbox in the facts' own transactions and wait there.
    await server.kill("SIGKILL");
    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, {
      side_effects: { refund: { idempotency_key: key, status: "not_started", tool: "billing" } },
    });
    const asked = await postIntent(
      t.apiKey,
      taskId,
      "refund",
      intentBody(key, { tool: "billing", requires_approval: true }),
    );
    expect(asked.status, asked.text).toBe(403);
    const effect = await unknownEffect(handle.db, t);
    const queued = await queryRows<{ id: string; event: string }>(
      handle.db,
      sql`select id, event from notification_deliveries where tenant_id = ${t.tenantId} and status = 'pending' order by event`,
    );
    expect(queued.map((q) => q.event)).toEqual(["approval.requested", "side_effect.unknown"]);

    // Restart; the first delivery is held by the receiver, and the server is killed while it waits.
    holdNext = true;
    await server.start();
    await waitFor("the first delivery", async () => (received.length >= 1 ? true : undefined));
    await server.kill("SIGKILL");
    for (const cut of held.splice(0)) cut();
    await server.start();

    const delivered = await waitFor(
      "both deliveries delivered",
      async () => {
        const rows = await queryRows<{ id: string; status: string; attempts: number }>(
          handle.db,
          sql`select id, status, attempts from notification_deliveries where tenant_id = ${t.tenantId}`,
        );
        return rows.length === 2 && rows.every((r) => r.status === "delivered") ? rows : undefined;
      },
      30_000,
    );
    // Each event reached the receiver under one webhook-id only; the one cut off was sent again under the same id.
    const ids = new Set(received.map((r) => r.id));
    expect(ids).toEqual(new Set(queued.map((q) => q.id)));
    expect(received.map((r) => r.event).sort()).toEqual(
      expect.arrayContaining(["approval.requested", "side_effect.unknown"]),
    );
    const idsPerEvent = new Map<string, Set<string>>();
    for (const r of received) idsPerEvent.set(r.event, (idsPerEvent.get(r.event) ?? new Set()).add(r.id));
    for (const [event, eventIds] of idsPerEvent) expect(eventIds.size, event).toBe(1);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(Math.max(...delivered.map((d) => d.attempts))).toBeGreaterThanOrEqual(2);
    // Only ids, names, reasons and a link.
    const unknownBody = received.find((r) => r.event === "side_effect.unknown")!.body as {
      data: Record<string, unknown>;
    };
    expect(unknownBody.data).toMatchObject({ task_id: effect.taskId, side_effect: effect.name });
    expect(String(unknownBody.data.link)).toBe(`${server.baseUrl}/tasks/${effect.taskId}`);

    const log = await on().get<{ deliveries: Array<{ id: string; status: string; attempts: number; event: string }> }>(
      `/api/v1/settings/notification-deliveries?endpoint_id=${created.body.id}`,
    );
    expect(log.status, log.text).toBe(200);
    expect(log.body.deliveries.map((d) => d.status)).toEqual(["delivered", "delivered"]);

    // Send again: the same webhook-id, one more attempt, audited.
    const first = log.body.deliveries[0]!;
    const before = received.length;
    const again = await on().post(`/api/v1/settings/notification-deliveries/${first.id}/resend`, undefined);
    expect(again.status, again.text).toBe(200);
    await waitFor("the delivery sent again", async () => (received.length > before ? true : undefined));
    expect(received.at(-1)!.id).toBe(first.id);
    expect((await auditRows(handle.db, t.tenantId, "notification_delivery.requeued")).length).toBe(1);
  });
});
