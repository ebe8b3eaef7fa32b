/**
 * Settings bodies people type: messages that say which rule was broken (not "is required" for a reason that is
 * only too short, not zod's raw "Invalid input …"), the API-key body as strict as the others, and names that
 * cannot disguise how they display in Settings and the Audit log (C0/C1 controls, bidi overrides and isolates →
 * 422). Every refusal writes nothing.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import { api, countRows, createTestTenant, openTestDb, type TestTenant } from "./helpers";

let handle: Awaited<ReturnType<typeof openTestDb>>;
let t: TestTenant;
let owner: { cookie: string };
beforeAll(async () => {
  handle = await openTestDb();
  t = await createTestTenant(handle.db, { roles: ["owner"] });
  owner = await signInAs(t, "owner");
});
afterAll(async () => {
  await handle?.close();
});

/** Everything the settings routes may write for the tenant, as one comparable value. */
async function settingsSnapshot() {
  const [row] = await queryRows(
    handle.db,
    sql`select (select count(*) from api_keys where tenant_id = ${t.tenantId})::int as keys,
               (select count(*) from principal_revocations where tenant_id = ${t.tenantId})::int as revocations,
               (select count(*) from tool_lookups where tenant_id = ${t.tenantId})::int as lookups`,
  );
  return { ...row, audit: await countRows(handle.db, "audit_log", t.tenantId) };
}

/** Posts as the owner and expects a 422 that writes nothing; returns the error message. */
async function refused(method: "POST" | "PUT", path: string, json: unknown): Promise<string> {
  const before = await settingsSnapshot();
  const res = await api(owner).request(method, path, { json });
  expectError(res, 422, "validation_failed");
  expect(await settingsSnapshot()).toEqual(before);
  return errorOf(res).message;
}

const REVOKE = "/api/v1/settings/principals/revoke";
const KEYS = "/api/v1/settings/api-keys";

describe("messages that name the field and the rule", () => {
  it("says a reason is too short (and what the rule is) instead of 'required'", async () => {
    const message = await refused("POST", REVOKE, { principal: "tenant/acme:user/1", reason: "x" });
    expect(message).toMatch(/^reason is too short/);
    expect(message).toContain("3–1000 characters");
    expect(message).not.toContain("required");
  });

  it("says a missing reason is required, naming the field, without zod's raw text", async () => {
    const message = await refused("POST", REVOKE, { principal: "tenant/acme:user/1" });
    expect(message).toMatch(/^reason is required: say why the authority is withdrawn \(3–1000 characters\)/);
    expect(message).not.toMatch(/Invalid input|received undefined/);
    expect(await refused("POST", REVOKE, { reason: "left the team" })).toMatch(/^principal is required/);
    expect(await refused("POST", "/api/v1/settings/principals/restore", {})).toMatch(/^principal is required/);
    expect(await refused("POST", REVOKE, { principal: "tenant/acme:user/1", reason: 42 })).toMatch(
      /^reason must be a string .*not number/,
    );
  });

  it("replaces zod's generic messages in other settings bodies too", async () => {
    const tool = "msg_tool";
    const missing = await refused("PUT", `/api/v1/settings/lookups/${tool}`, { timeout_ms: 1000 });
    expect(missing).toBe("url must be an absolute http(s) URL"); // the schema's own message is kept
    const wrongType = await refused("PUT", `/api/v1/settings/lookups/${tool}`, {
      url: "https://lookup.example/x",
      timeout_ms: "soon",
    });
    expect(wrongType).toBe("timeout_ms must be a number, not string");
    const notObject = await refused("POST", KEYS, ["runtime"]);
    expect(notObject).toBe("body must be an object, not array");
  });
});

describe("POST /api/v1/settings/api-keys is strict", () => {
  it("refuses unknown fields, naming them", async () => {
    const message = await refused("POST", KEYS, { name: "docs runtime", scopes: ["admin"] });
    expect(message).toContain('unknown field "scopes"');
  });

  it("says a missing, empty or too long name is the problem", async () => {
    expect(await refused("POST", KEYS, {})).toMatch(/^name is required: give the key a name/);
    expect(await refused("POST", KEYS, { name: "   " })).toMatch(/^name must not be empty/);
    expect(await refused("POST", KEYS, { name: "n".repeat(101) })).toMatch(
      /^name is too long \(101 characters\); at most 100/,
    );
  });

  it("still creates a key from a plain name, non-Latin letters included", async () => {
    const res = await api(owner).post<{ name: string; key: string }>(KEYS, { name: "  Läufer runtime – 東京 ✓ " });
    expect(res.status, res.text).toBe(200);
    expect(res.body.name).toBe("Läufer runtime – 東京 ✓");
  });
});

describe("names that could disguise how they display", () => {
  const SPOOFS: Array<[string, string]> = [
    ["\u202e", "U+202E"], // right-to-left override
    ["\u202a", "U+202A"], // left-to-right embedding
    ["\u2066", "U+2066"], // left-to-right isolate
    ["\u2069", "U+2069"], // pop directional isolate
    ["\u0007", "U+0007"], // C0: bell
    ["\u001b", "U+001B"], // C0: escape
    ["\u009b", "U+009B"], // C1: control sequence introducer
    ["\u007f", "U+007F"], // delete
  ];

  it.each(SPOOFS)("refuses %j in an API key name (422, naming the character)", async (ch, code) => {
    const message = await refused("POST", KEYS, { name: `invoice${ch}fdp.exe` });
    expect(message).toMatch(/^name contains a (control character|bidirectional control character)/);
    expect(message).toContain(code);
  });

  it("refuses a bidi override in a revocation reason and in a principal", async () => {
    expect(await refused("POST", REVOKE, { principal: "tenant/acme:user/7", reason: "left \u202eeht maet" })).toMatch(
      /^reason contains .*U\+202E/,
    );
    expect(await refused("POST", REVOKE, { principal: "tenant/acme:user/\u202e7", reason: "left the team" })).toMatch(
      /^principal contains .*U\+202E/,
    );
    expect(
      await refused("POST", REVOKE, { principal: "tenant/acme:user/7", reason: "line one\u0085line two" }),
    ).toMatch(/^reason contains a control character \(U\+0085\)/);
  });

  it("refuses a bidi override in a lookup tool name and in a lookup URL", async () => {
    const toolMessage = await refused("PUT", `/api/v1/settings/lookups/${encodeURIComponent("update\u202erecord")}`, {
      url: "https://lookup.example/x",
    });
    expect(toolMessage).toMatch(/^tool contains .*U\+202E/);
    const urlMessage = await refused("PUT", "/api/v1/settings/lookups/update_record", {
      url: "https://lookup.example/\u202ex",
    });
    expect(urlMessage).toMatch(/^url contains .*U\+202E/);
  });

  it("accepts the same bodies without the character", async () => {
    expect((await api(owner).post(REVOKE, { principal: "tenant/acme:user/7", reason: "left the team" })).status).toBe(
      200,
    );
    expect(
      (await api(owner).put("/api/v1/settings/lookups/update_record", { url: "https://lookup.example/x" })).status,
    ).toBe(200);
  });
});
