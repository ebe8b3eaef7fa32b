/**
 * The credential shapes of decision 0027 through the real API: sent in event attrs (POST /api/v1/events) each is
 * stored redacted and counted (read back through GET /api/v1/tasks/{id}/timeline and in the database), and put in a
 * checkpoint record (PUT /api/v1/tasks/{id}) each is refused with 422 naming its path, leaving nothing signed.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { ApiErrorBody, TimelinePage } from "@/lib/contract/api";
import { api, createTestTenant, makeEvent, makeRecord, newTaskId, postEvents, testDbForFile } from "./helpers";

const handle = testDbForFile();
const enc = encodeURIComponent;

// Built from parts so that this file does not itself look like it holds secrets.
const j = (...parts: string[]) => parts.join("");

/** Text shapes tried: a name, the text, and the secret in it. */
const TEXT_SHAPES: Array<[string, string, string]> = [
  [
    "an ODBC connection string",
    j("Driver={ODBC Driver 18};Server=db;Uid=app;Pwd=", "Sup3rS3cret!", ";"),
    "Sup3rS3cret!",
  ],
  [
    "an API token in a URL path",
    j("https://api.example.com/api/", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "/status"),
    "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
  ],
  ["PGPASSWORD", j("PGPASSWORD=", "hunter2hunter2", " psql -h db"), "hunter2hunter2"],
  ["MYSQL_PWD", j("MYSQL_PWD=", "My-Pwd-S3cret", " mysql -u app"), "My-Pwd-S3cret"],
  ["mysql -p", j("mysql -u root -p", "S3cretPass", " db"), "S3cretPass"],
  ["an INI pass line", j("[db]\nuser=app\npass=", "Ini-S3cret-1", "\n"), "Ini-S3cret-1"],
  ["a vault template", "{{vault:kv/records#token}}", "kv/records"],
  ["a secrets template", "${secrets.RECORDS_TOKEN}", "RECORDS_TOKEN"],
  ["a 1Password reference", "op://Private/records/credential", "Private/records"],
  ["an AWS Secrets Manager reference", "{{resolve:secretsmanager:prod/db:SecretString:password}}", "prod/db"],
];

/** JSON fields tried: the field name and a value. */
const FIELD_SHAPES: Array<[string, string]> = [
  ["pass", j("Json-", "S3cret-1")],
  ["db_pass", j("Json-", "S3cret-2")],
  ["credentials", j("admin:", "Cr3ds-S3cret")],
  ["auth", j("svc:", "Auth-S3cret")],
];

type ShapeCase = { name: string; attrs: Record<string, unknown>; secret: string; path: string };
const CASES: ShapeCase[] = [
  ...TEXT_SHAPES.map(([name, text, secret]) => ({ name, attrs: { command: text }, secret, path: "command" })),
  ...FIELD_SHAPES.map(([field, value]) => ({
    name: `a JSON field named ${field}`,
    attrs: { connection: { [field]: value } },
    secret: value,
    path: `connection.${field}`,
  })),
];

describe("every tried credential shape", () => {
  it("is redacted and counted on the stored event, read back through the timeline", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("shapes");
    const events = CASES.map((c) => makeEvent(taskId, { plane: "tools", type: "tool.called", attrs: c.attrs }));
    const res = await postEvents(t.apiKey, events);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r) => r.status)).toEqual(events.map(() => "stored"));

    const page = await api(t.apiKey).get<TimelinePage>(`/api/v1/tasks/${enc(taskId)}/timeline?limit=100`);
    expect(page.status).toBe(200);
    const byId = new Map(page.body.events.map((e) => [e.id, e]));
    CASES.forEach((c, k) => {
      const stored = byId.get(events[k]!.id)!;
      expect(stored, c.name).toBeDefined();
      const text = JSON.stringify(stored.attrs);
      expect(text, c.name).not.toContain(c.secret);
      expect(text, c.name).toContain("[REDACTED]");
      expect(stored.redaction_count, c.name).toBeGreaterThan(0);
    });

    // Nothing of any secret reached the database.
    const rows = await queryRows<{ attrs: string }>(
      handle.db,
      sql`select attrs::text as attrs from events where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(rows).toHaveLength(CASES.length);
    const all = rows.map((r) => r.attrs).join("\n");
    for (const c of CASES) expect(all, c.name).not.toContain(c.secret);
  });

  it("is refused with 422 naming its path in a checkpoint record, and nothing is signed", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    for (const c of CASES) {
      const taskId = newTaskId("shape-record");
      // Text goes in a decision's summary; JSON fields in the free-form approval object.
      const isText = c.path === "command";
      const record = isText
        ? makeRecord(taskId, { decisions: [{ id: "d1", summary: `ran ${c.attrs.command as string}` }] })
        : makeRecord(taskId, { approval: c.attrs as Record<string, unknown> });
      const res = await api(t.apiKey).request<ApiErrorBody>("PUT", `/api/v1/tasks/${enc(taskId)}`, { json: record });
      expect(res.status, `${c.name}: ${res.text}`).toBe(422);
      const path = isText ? "decisions[0].summary" : `approval.${c.path}`;
      expect(res.body.error.code, c.name).toBe("validation_failed");
      expect(res.body.error.message.startsWith(`${path}:`), `${c.name}: ${res.body.error.message}`).toBe(true);
      expect(res.text, c.name).not.toContain(c.secret);
      const rows = await queryRows<{ n: number }>(
        handle.db,
        sql`select count(*)::int as n from task_checkpoints where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
      );
      expect(rows[0]?.n, c.name).toBe(0);
    }
  });

  it("reads a shell tool's argv as one command line, on the event and in a checkpoint record", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("argv");
    const secret = j("S3cret", "Pass-2");
    const call = { type: "exec", command: ["mysql", "-u", "root", `-p${secret}`, "app"] };
    const ev = makeEvent(taskId, { plane: "tools", type: "tool.called", attrs: { call } });
    expect((await postEvents(t.apiKey, [ev])).body.results[0]!.status).toBe("stored");
    const page = await api(t.apiKey).get<TimelinePage>(`/api/v1/tasks/${enc(taskId)}/timeline`);
    const stored = page.body.events.find((e) => e.id === ev.id)!;
    expect(stored.attrs).toEqual({ call: { ...call, command: ["mysql", "-u", "root", "-p[REDACTED]", "app"] } });
    expect(stored.redaction_count).toBe(1);

    const put = await api(t.apiKey).request<ApiErrorBody>("PUT", `/api/v1/tasks/${enc(taskId)}`, {
      json: makeRecord(taskId, { approval: { call } }),
    });
    expect(put.status, put.text).toBe(422);
    expect(put.body.error.message.startsWith("approval.call.command[3]:"), put.body.error.message).toBe(true);
    expect(put.text).not.toContain(secret);
  });

  it("keeps the look-alikes: credential names, ids in paths, settings and command lines without a password", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("lookalikes");
    const attrs = {
      credentials: ["records-api"],
      credential_ref: "records-api",
      auth_method: "oauth2",
      pass_count: 3,
      pwd: "/workspace",
      url: `https://custody.example.com/api/v1/tasks/0b6c7a2e-4c1f-4e8a-9d3b-2f1e0a9c8b7d/timeline`,
      command: "mkdir -p /tmp/x && mysql -u root -p app",
      home: "${env:HOME}",
    };
    const ev = makeEvent(taskId, { plane: "environment", type: "manifest.applied", attrs });
    expect((await postEvents(t.apiKey, [ev])).body.results[0]!.status).toBe("stored");
    const page = await api(t.apiKey).get<TimelinePage>(`/api/v1/tasks/${enc(taskId)}/timeline`);
    const stored = page.body.events.find((e) => e.id === ev.id)!;
    expect(stored.attrs).toEqual(attrs);
    expect(stored.redaction_count).toBe(0);

    const record = makeRecord(taskId, {
      decisions: [{ id: "d1", summary: `checked ${attrs.url} with ${attrs.command}` }],
      approval: { auth: "oauth2", credentials: ["records-api"] },
    });
    const put = await api(t.apiKey).request("PUT", `/api/v1/tasks/${enc(taskId)}`, { json: record });
    expect(put.status, put.text).toBe(200);
  });
});
