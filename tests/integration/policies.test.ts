/**
 * Policy versions over the real HTTP API on PostgreSQL (issue 11): lint stores nothing and answers runtimes and
 * every role; YAML and JSON alike; storing numbers versions and finds a repeated document; a version with a lint
 * error is stored but refused at activation (422 policy_invalid with its findings); activation is audited; the wrong
 * role (403) and the wrong tenant (404) are refused; bad bodies write nothing.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { auditRows, errorOf, expectError, signInAs } from "./custody-helpers";
import { api, createTestTenant, testDbForFile, type FullTestTenant } from "./helpers";

const handle = testDbForFile();

type Auth = { cookie: string } | string;
type Finding = { severity: string; rule: string; path: string; message: string };

const GOOD_YAML = `# The demo's records service, by host name.
network:
  access: restricted
  allowed_domains: [records.example.com]
credentials:
  - name: records-api
    type: environment_variable
    allowed_hosts: [records.example.com]
    scope: records:write
tools:
  - name: update_record
    mutation: true
    requires_approval: true
`;
const MISMATCHED_YAML = GOOD_YAML.replace("allowed_hosts: [records.example.com]", "allowed_hosts: [records.example.org]");

function sendYaml(auth: Auth, path: string, text: string, type = "application/yaml") {
  return api(auth).request<Record<string, unknown>>("POST", path, { raw: text, headers: { "content-type": type } });
}

async function policyCount(tenantId: string): Promise<number> {
  const [r] = await queryRows<{ n: string }>(handle.db, sql`select count(*) as n from policy_versions where tenant_id = ${tenantId}`);
  return Number(r!.n);
}

describe("policy versions", () => {
  let t: FullTestTenant;
  let other: FullTestTenant;
  let owner: Auth;
  let admin: Auth;
  let viewer: Auth;
  let responder: Auth;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    other = await createTestTenant(handle.db);
    [owner, admin, viewer, responder] = await Promise.all([signInAs(t, "owner"), signInAs(t, "admin"), signInAs(t, "viewer"), signInAs(t, "responder")]);
  });

  it("lints YAML and JSON for a runtime key and every role, storing nothing", async () => {
    const yaml = await sendYaml(t.apiKey, "/api/v1/policies/lint", GOOD_YAML);
    expect(yaml.status, yaml.text).toBe(200);
    expect(yaml.body).toEqual({ valid: true, findings: [] });
    const bad = await sendYaml(viewer, "/api/v1/policies/lint", MISMATCHED_YAML);
    expect(bad.status, bad.text).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.findings as Finding[]).toContainEqual(
      expect.objectContaining({ severity: "error", rule: "credential_host_not_allowed", path: "credentials[0].allowed_hosts[0]" }),
    );
    const json = await api(responder).post<{ valid: boolean; findings: Finding[] }>("/api/v1/policies/lint", {
      network: { access: "none" },
      credentials: [{ name: "k", type: "environment_variable", allowed_hosts: [] }],
      tools: [],
    });
    expect(json.status, json.text).toBe(200);
    expect(json.body.findings.map((f) => f.rule)).toEqual(["network_none_with_credential"]);
    expect(await policyCount(t.tenantId)).toBe(0);
  });

  it("refuses other content types, broken YAML, reserved keys and credential values, writing nothing", async () => {
    expectError(await sendYaml(owner, "/api/v1/policies/lint", GOOD_YAML, "text/plain"), 415, "unsupported_media_type");
    expectError(await sendYaml(owner, "/api/v1/policies", "network: [", "application/yaml"), 400, "invalid_json");
    expectError(await sendYaml(owner, "/api/v1/policies", '{"network": {"access": "open"}, "__proto__": {}}', "application/json"), 422, "validation_failed");
    const secret = await sendYaml(owner, "/api/v1/policies", `${GOOD_YAML}# token: ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n`);
    expectError(secret, 422, "validation_failed");
    expect(errorOf(secret).message).not.toContain("ghp_");
    expect(await policyCount(t.tenantId)).toBe(0);
    const none = await api(owner).request("POST", "/api/v1/policies/lint");
    expect(none.status).toBe(400);
  });

  it("stores numbered versions; a document with errors is kept but cannot be activated; activation is audited", async () => {
    const first = await sendYaml(admin, "/api/v1/policies", MISMATCHED_YAML);
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ version: 1, valid: false, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const refused = await api(owner).request<{ error: { code: string; details: { findings: Finding[] } } }>("POST", "/api/v1/policies/1/activate");
    expectError(refused, 422, "policy_invalid");
    expect(refused.body.error.details.findings[0]).toMatchObject({ path: "credentials[0].allowed_hosts[0]" });
    expect(((await api(owner).get<{ policy: null }>("/api/v1/policies/current")).body)).toEqual({ policy: null });

    const second = await sendYaml(owner, "/api/v1/policies", GOOD_YAML);
    expect(second.status, second.text).toBe(201);
    expect(second.body).toMatchObject({ version: 2, valid: true, findings: [] });
    const again = await api(owner).post("/api/v1/policies", (await api(owner).get<{ document: unknown }>("/api/v1/policies/2")).body.document);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ version: 2 });

    const activated = await api(owner).request("POST", "/api/v1/policies/2/activate");
    expect(activated.status, activated.text).toBe(200);
    expect(activated.body).toMatchObject({ version: 2, previous: null, changed: true });
    const current = await api(t.apiKey).get<{ version: number; active: boolean; source_text: string; document: { network: { access: string } } }>("/api/v1/policies/current");
    expect(current.body).toMatchObject({ version: 2, active: true, document: { network: { access: "restricted" } } });
    expect(current.body.source_text).toBe(GOOD_YAML);
    const list = await api(viewer).get<{ policies: Array<{ version: number; active: boolean; valid: boolean }> }>("/api/v1/policies");
    expect(list.body.policies.map((p) => [p.version, p.active, p.valid])).toEqual([
      [2, true, true],
      [1, false, false],
    ]);
    const audit = await auditRows(handle.db, t.tenantId);
    expect(audit.filter((a) => a.action.startsWith("policy.")).map((a) => [a.action, a.target])).toEqual([
      ["policy.store", "policy:1"],
      ["policy.store", "policy:2"],
      ["policy.activate", "policy:2"],
    ]);
    const same = await api(admin).request("POST", "/api/v1/policies/2/activate");
    expect(same.body).toMatchObject({ changed: false });
    expect((await auditRows(handle.db, t.tenantId, "policy.activate")).length).toBe(1);
  });

  it("refuses the wrong role (403) and the wrong tenant (404)", async () => {
    for (const who of [viewer, responder, t.apiKey, await signInAs(t, "approver")]) {
      expectError(await sendYaml(who, "/api/v1/policies", GOOD_YAML), 403, "forbidden");
      expectError(await api(who).request("POST", "/api/v1/policies/2/activate"), 403, "forbidden");
    }
    const stranger = await signInAs(other, "owner");
    expectError(await api(stranger).get("/api/v1/policies/2"), 404, "not_found");
    expectError(await api(stranger).request("POST", "/api/v1/policies/2/activate"), 404, "not_found");
    expect((await api(other.apiKey).get<{ policies: unknown[] }>("/api/v1/policies")).body.policies).toEqual([]);
    expectError(await api(owner).get("/api/v1/policies/two"), 400, "bad_request");
    expectError(await api(owner).get("/api/v1/policies/99"), 404, "not_found");
    expect(await api(undefined as unknown as string).get("/api/v1/policies")).toMatchObject({ status: 401 });
  });
});
