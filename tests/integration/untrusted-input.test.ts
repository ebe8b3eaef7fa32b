/**
 * Input built to hurt, through the real HTTP API (decisions 0008, 0009): secrets in the shapes runtimes really
 * send never reach the database or a page, and are refused where the value is signed or chained; input that would
 * crash (deep nesting) or change silently (numbers a double cannot carry, repeated keys, `__proto__`, leap
 * seconds, nine fractional digits) is refused with a 422 naming the path, or kept exactly; typed names refuse
 * invisible characters.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { ApiErrorBody, StoredEvent } from "@/lib/contract/api";
import { checkpoint, intentBody, newKey, postIntent } from "./support/custody-calls";
import { signInAs } from "./support/people";
import {
  api,
  countRows,
  createTestTenant,
  makeEvent,
  makeRecord,
  newTaskId,
  postEvents,
  testDbForFile,
} from "./helpers";

const handle = testDbForFile();
const err = (res: { body: unknown }) => (res.body as ApiErrorBody).error;

/** Every text column of the tenant's rows, as one string (to look for a planted secret). */
async function tenantText(tenantId: string): Promise<string> {
  const rows = await queryRows<{ t: string }>(
    handle.db,
    sql`select coalesce((select json_agg(e)::text from events e where tenant_id = ${tenantId}), '')
          || coalesce((select json_agg(c)::text from task_checkpoints c where tenant_id = ${tenantId}), '')
          || coalesce((select json_agg(s)::text from side_effects s where tenant_id = ${tenantId}), '')
          || coalesce((select json_agg(a)::text from audit_log a where tenant_id = ${tenantId}), '') as t`,
  );
  return rows[0]?.t ?? "";
}

describe("secrets in the shapes runtimes send", () => {
  it("redacts tool-call arguments held as a JSON string, header pairs, and secret fields that are not strings", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const taskId = newTaskId();
    const ev = makeEvent(taskId, {
      plane: "tools",
      type: "tool.called",
      attrs: {
        tool: "login",
        arguments: JSON.stringify({ username: "ada", password: "Hunter2-Secret-99" }),
        headers: [
          ["Cookie", "sid=Zx9Yw8Vu7Ts6-cookie"],
          ["X-Api-Key", "9f8e7d6c5b4a3928"],
        ],
        har: [{ name: "Cookie", value: "sid=Ab1Cd2Ef3-har" }],
        login: { password: 12345678 },
      },
    });
    const res = await postEvents(t.apiKey, [ev]);
    expect(res.body.results[0]).toEqual({ id: ev.id, status: "stored" });
    const stored = await tenantText(t.tenantId);
    for (const secret of ["Hunter2-Secret-99", "Zx9Yw8Vu7Ts6-cookie", "9f8e7d6c5b4a3928", "Ab1Cd2Ef3-har", "12345678"])
      expect(stored).not.toContain(secret);
    const viewer = await signInAs(t, "viewer");
    const timeline = await api(viewer).get<{ events: StoredEvent[] }>(`/api/v1/tasks/${taskId}/timeline`);
    const shown = timeline.body.events[0]!;
    expect(JSON.parse(shown.attrs.arguments as string)).toEqual({ username: "ada", password: "[REDACTED]" });
    expect(shown.attrs.headers).toEqual([
      ["Cookie", "[REDACTED]"],
      ["X-Api-Key", "[REDACTED]"],
    ]);
    expect(shown.attrs.login).toEqual({ password: "[REDACTED]" });
    expect(shown.redaction_count).toBe(5);
  });

  it("refuses an event whose id or type is a credential (ids are keys: a redacted copy would merge events)", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, { id: `ghp_${"A1b2C3d4E5".repeat(4)}` }),
      makeEvent(taskId, { type: `x.sk-${"q".repeat(24)}` }),
      makeEvent(taskId),
    ]);
    expect(res.body.results.map((r) => r.status)).toEqual(["rejected", "rejected", "stored"]);
    expect(res.body.results[0]!.id).toBe("");
    expect(res.body.results[1]!.error!.message).toContain("type looks like a credential");
    expect(await tenantText(t.tenantId)).not.toContain("A1b2C3d4E5A1b2C3d4E5");
  });

  it("refuses a checkpoint with a secret in JSON held as a string, or in a header pair, with 422 naming the path", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    for (const [approval, path] of [
      [{ call: '{"password": "Hunter2-Secret-99"}' }, "approval.call(JSON).password"],
      [{ headers: [["Cookie", "sid=abc"]] }, "approval.headers[0][1]"],
      [{ pin: { password: 1234 } }, "approval.pin.password"],
    ] as const) {
      const res = await api(t.apiKey).put(`/api/v1/tasks/${taskId}`, makeRecord(taskId, { approval }));
      expect(res.status, res.text).toBe(422);
      expect(err(res).message).toContain(path);
    }
    expect(await countRows(handle.db, "task_checkpoints", t.tenantId)).toBe(0);
  });

  it("refuses an intent whose action holds a credential, naming the field", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const res = await postIntent(
      t.apiKey,
      taskId,
      "update_record",
      intentBody(newKey(), { action: "curl -H 'Cookie: sid=abc123def'" }),
    );
    expect(res.status, res.text).toBe(422);
    expect(res.text).toContain("action");
  });
});

describe("input that used to crash or change silently", () => {
  it("answers 422 naming the path, not 500, to attrs nested 5,000 levels deep", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const raw = `{"events":[{"id":"e1","task_id":"t1","plane":"tools","type":"tool.called","occurred_at":"${new Date().toISOString()}","attrs":${'{"d":'.repeat(5000)}1${"}".repeat(5000)}}]}`;
    const res = await api(t.apiKey).request("POST", "/api/v1/events", { raw });
    expect(res.status, res.text.slice(0, 300)).toBe(422);
    expect(err(res).message).toMatch(/^events\[0\]\.attrs(\.d)+ is nested deeper than 512 levels/);
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(0);
  });

  it("answers 400, not 500, to a NUL (%00) in an address: task ids, filters, searches, credential refs and pages", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const taskId = newTaskId("nul");
    await checkpoint(t, taskId, {});
    const calls: Array<[string, string, { cookie: string } | string]> = [
      ["GET", "/api/v1/tasks?q=%00", t.apiKey],
      ["GET", "/api/v1/tasks?q=a%00b", t.apiKey],
      ["GET", "/api/v1/tasks?host=%00", t.apiKey],
      ["GET", "/api/v1/tasks?credential_ref=%00", t.apiKey],
      ["GET", "/api/v1/tasks?policy_version=%00", t.apiKey],
      ["GET", "/api/v1/tasks/a%00b/egress", t.apiKey],
      ["GET", "/api/v1/tasks/%00/credentials", t.apiKey],
      ["POST", `/api/v1/tasks/${taskId}/credentials/c%00/revocation-check`, owner],
      ["GET", "/api/v1/maps?q=%00", owner],
      ["POST", `/api/v1/tasks/${taskId}/resume?x=%00`, t.apiKey],
      ["GET", "/tasks?q=%00", owner],
      ["GET", "/tasks?host=%00", owner],
    ];
    for (const [method, path, who] of calls) {
      const res = await api(who).request(method, path, method === "POST" ? { json: {} } : {});
      expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(400);
      expect(res.text).toContain("NUL");
    }
    // A policy whose text holds a raw NUL (in a YAML comment, which no parsed value shows) is refused too.
    const yaml = "network:\n  access: open\ncredentials: []\n# c\u0000mment\n";
    for (const path of ["/api/v1/policies", "/api/v1/policies/lint"]) {
      const res = await api(owner).request("POST", path, {
        raw: yaml,
        headers: { "content-type": "application/yaml" },
      });
      expect(res.status, `${path}: ${res.text.slice(0, 200)}`).toBe(422);
    }
    const [stored] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from policy_versions where tenant_id = ${t.tenantId}`,
    );
    expect(stored!.n).toBe(0);
  });

  it.each([
    ["1234567890123456789", "1234567890123456800"],
    ["1e400", "Infinity"],
    ["-9007199254740993", "-9007199254740992"],
  ])("refuses the attr %s (it would become %s) with 422 naming the path", async (number, becomes) => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const event = JSON.stringify(makeEvent(newTaskId(), { attrs: { n: 0 } })).replace('"n":0', `"n":${number}`);
    const res = await api(t.apiKey).request("POST", "/api/v1/events", { raw: `{"events":[${event}]}` });
    expect(res.status, res.text).toBe(422);
    expect(err(res).message).toContain("events[0].attrs.n");
    expect(err(res).message).toContain(becomes);
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(0);
  });

  it("never signs a number the sender did not send: a checkpoint with 9007199254740993 is refused, 9007199254740992 kept", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const body = (n: string) =>
      JSON.stringify(makeRecord(taskId, { approval: { budget: 0 } })).replace('"budget":0', `"budget":${n}`);
    const refused = await api(t.apiKey).request("PUT", `/api/v1/tasks/${taskId}`, { raw: body("9007199254740993") });
    expect(refused.status, refused.text).toBe(422);
    expect(err(refused).message).toContain("approval.budget");
    expect(await countRows(handle.db, "task_checkpoints", t.tenantId)).toBe(0);
    const kept = await api(t.apiKey).request("PUT", `/api/v1/tasks/${taskId}`, { raw: body("9007199254740992") });
    expect(kept.status, kept.text).toBe(200);
  });

  it("refuses a repeated key and the key __proto__, naming the path", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const event = JSON.stringify(makeEvent(taskId, { attrs: { a: 1 } }));
    const twice = await api(t.apiKey).request("POST", "/api/v1/events", {
      raw: `{"events":[${event.replace('"a":1', '"a":1,"a":2')}]}`,
    });
    expect(twice.status, twice.text).toBe(422);
    expect(err(twice).message).toMatch(/^events\[0\]\.attrs\.a repeats the key "a"/);
    const proto = await api(t.apiKey).request("POST", "/api/v1/events", {
      raw: `{"events":[${event.replace('"a":1', '"__proto__":{"x":1}')}]}`,
    });
    expect(proto.status, proto.text).toBe(422);
    expect(err(proto).message).toContain('events[0].attrs.__proto__ uses the key "__proto__"');
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(0);
  });

  it("explains a leap second instead of talking about zones", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const res = await postEvents(t.apiKey, [makeEvent(newTaskId(), { occurred_at: "2025-12-31T23:59:60Z" })]);
    expect(res.body.results[0]!.status).toBe("rejected");
    expect(res.body.results[0]!.error!.message).toContain("leap second");
    expect(res.body.results[0]!.error!.message).not.toContain("zone");
    const noZone = await postEvents(t.apiKey, [makeEvent(newTaskId(), { occurred_at: "2025-12-31T10:00:00" })]);
    expect(noZone.body.results[0]!.error!.message).toContain("has no zone: add Z");
  });

  it("keeps microseconds and drops digits past them instead of rounding up to the next second", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const ev = makeEvent(taskId, { occurred_at: "2025-12-31T23:59:59.999999999Z" });
    expect((await postEvents(t.apiKey, [ev])).body.results[0]!.status).toBe("stored");
    const [row] = await queryRows<{ at: string }>(
      handle.db,
      sql`select to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as at from events where tenant_id = ${t.tenantId} and event_id = ${ev.id}`,
    );
    expect(row!.at).toBe("2025-12-31T23:59:59.999999");
  });
});

describe("typed names", () => {
  it.each([
    ["a zero-width space", "tenant/acme:user/\u200b42"],
    ["a word joiner", "tenant/acme:user/4\u20602"],
    ["a byte order mark", "tenant/\ufeffacme:user/42"],
    ["a soft hyphen", "tenant/acme:us\u00adzer/42"],
  ])("refuse %s in a principal, when revoking and in a checkpoint", async (_name, principal) => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const revoke = await api(owner).post("/api/v1/settings/principals/revoke", { principal, reason: "left the team" });
    expect(revoke.status, revoke.text).toBe(422);
    expect(err(revoke).message).toMatch(/^principal contains an invisible character \(U\+[0-9A-F]{4}\)/);
    const taskId = newTaskId();
    const put = await api(t.apiKey).put(`/api/v1/tasks/${taskId}`, makeRecord(taskId, { principal }));
    expect(put.status, put.text).toBe(422);
    expect(put.text).toContain("invisible character");
  });
});
