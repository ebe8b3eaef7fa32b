/**
 * Policy versions over the real HTTP API on PostgreSQL (docs/concepts.md#policy-versions-and-lint): lint stores nothing
 * and answers runtimes and every role; YAML and JSON alike; storing numbers versions and finds a repeated document; a
 * version with a lint error is stored but refused at activation (422 policy_invalid with its findings); activation is
 * audited; the wrong role (403) and the wrong tenant (404) are refused; bad bodies write nothing.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { toolCallDigest } from "@/lib/domain/crypto/canonical";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import { auditRows } from "./support/stored-rows";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, testDbForFile, type FullTestTenant } from "./helpers";
import { RECORDS_POLICY_YAML, recordsPolicy, recordsPolicyYaml } from "../support/policy-document";

const handle = testDbForFile();

type Auth = { cookie: string } | string;
type Finding = { severity: string; rule: string; path: string; message: string };

/** The shared records policy (tests/support/policy-document.ts) with a credential host its network does not admit: stored, but fails lint. */
const MISMATCHED_YAML = recordsPolicyYaml((d) => (d.credentials[0]!.allowed_hosts = ["records.example.org"]));

function sendYaml(auth: Auth, path: string, text: string, type = "application/yaml") {
  return api(auth).request<Record<string, unknown>>("POST", path, { raw: text, headers: { "content-type": type } });
}

async function policyCount(tenantId: string): Promise<number> {
  const [r] = await queryRows<{ n: string }>(
    handle.db,
    sql`select count(*) as n from policy_versions where tenant_id = ${tenantId}`,
  );
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
    [owner, admin, viewer, responder] = await Promise.all([
      signInAs(t, "owner"),
      signInAs(t, "admin"),
      signInAs(t, "viewer"),
      signInAs(t, "responder"),
    ]);
  });

  it("lints YAML and JSON for a runtime key and every role, storing nothing", async () => {
    const yaml = await sendYaml(t.apiKey, "/api/v1/policies/lint", RECORDS_POLICY_YAML);
    expect(yaml.status, yaml.text).toBe(200);
    expect(yaml.body).toEqual({ valid: true, findings: [] });
    const bad = await sendYaml(viewer, "/api/v1/policies/lint", MISMATCHED_YAML);
    expect(bad.status, bad.text).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.findings as Finding[]).toContainEqual(
      expect.objectContaining({
        severity: "error",
        rule: "credential_host_not_allowed",
        path: "credentials[0].allowed_hosts[0]",
      }),
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
    expectError(
      await sendYaml(owner, "/api/v1/policies/lint", RECORDS_POLICY_YAML, "text/plain"),
      415,
      "unsupported_media_type",
    );
    expectError(await sendYaml(owner, "/api/v1/policies", "network: [", "application/yaml"), 400, "invalid_json");
    expectError(
      await sendYaml(owner, "/api/v1/policies", '{"network": {"access": "open"}, "__proto__": {}}', "application/json"),
      422,
      "validation_failed",
    );
    const secret = await sendYaml(
      owner,
      "/api/v1/policies",
      `${RECORDS_POLICY_YAML}# token: ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n`,
    );
    expectError(secret, 422, "validation_failed");
    expect(errorOf(secret).message).not.toContain("ghp_");
    // Escapes that make strings PostgreSQL cannot store (a lone surrogate, a NUL), in JSON and in YAML: 422, not 500.
    const lone = '{"network": {"access": "open", "allowed_domains": ["\\ud83c\\u200d\\udf8a"]}, "credentials": []}';
    expectError(await sendYaml(owner, "/api/v1/policies", lone, "application/json"), 422, "validation_failed");
    expectError(
      await sendYaml(
        owner,
        "/api/v1/policies",
        'network:\n  access: open\n  allowed_domains: ["a\\u0000b"]\ncredentials: []\n',
      ),
      422,
      "validation_failed",
    );
    expectError(await sendYaml(owner, "/api/v1/policies/lint", lone, "application/json"), 422, "validation_failed");
    expect(await policyCount(t.tenantId)).toBe(0);
    expectError(await api(owner).request("POST", "/api/v1/policies/lint"), 415, "unsupported_media_type");
    expectError(
      await api(owner).request("POST", "/api/v1/policies/lint", {
        raw: "",
        headers: { "content-type": "application/yaml" },
      }),
      400,
      "invalid_json",
    );
  });

  it("refuses numbers JSON cannot carry and a body that is not an object with 422 naming the path, storing and auditing nothing", async () => {
    const fresh = await createTestTenant(handle.db, { roles: ["owner"] });
    const author = await signInAs(fresh, "owner");
    const auditBefore = (await auditRows(handle.db, fresh.tenantId)).length;
    const yamlWith = (ttl: string) => `${RECORDS_POLICY_YAML}    approval_ttl: ${ttl}\n`;
    const cases: Array<[text: string, type: string, path: string]> = [
      [
        '{"network": {"access": "open"}, "credentials": [], "tools": [{"name": "t", "mutation": false, "approval_ttl": 1e400}]}',
        "application/json",
        "tools[0].approval_ttl",
      ],
      [
        '{"network": {"access": "open"}, "tools": [{"name": "t", "mutation": false, "approval_ttl": 123456789012345678901234567890}]}',
        "application/json; charset=utf-8",
        "tools[0].approval_ttl",
      ],
      [yamlWith(".inf"), "application/yaml", "tools[0].approval_ttl"],
      [yamlWith(".nan"), "application/yaml", "tools[0].approval_ttl"],
      [yamlWith("-.inf"), "application/yaml", "tools[0].approval_ttl"],
      [yamlWith("1e400"), "application/yaml", "tools[0].approval_ttl"],
      [yamlWith("123456789012345678901234567890"), "application/yaml", "tools[0].approval_ttl"],
      ["[1,2]", "application/json", ""],
      ['"x"', "application/json", ""],
      ["3", "application/json", ""],
      ["null", "application/json", ""],
      ["- 1\n- 2\n", "application/yaml", ""],
    ];
    for (const [text, type, fieldPath] of cases) {
      for (const route of ["/api/v1/policies", "/api/v1/policies/lint"]) {
        const res = await sendYaml(author, route, text, type);
        expectError(res, 422, "validation_failed");
        const error = errorOf(res) as { message: string; details?: { fields?: Array<{ path: string }> } };
        expect(error.details?.fields?.[0]?.path, `${route} ${text}`).toBe(fieldPath);
        expect(error.message).toContain(fieldPath || "The policy");
      }
    }
    expect(await policyCount(fresh.tenantId)).toBe(0);
    expect((await auditRows(handle.db, fresh.tenantId)).length).toBe(auditBefore);
    // The same documents with numbers a double carries are stored.
    const ok = await sendYaml(author, "/api/v1/policies", yamlWith("3600"));
    expect(ok.status, ok.text).toBe(201);
  });

  it("stores numbered versions; a document with errors is kept but cannot be activated; activation is audited", async () => {
    const first = await sendYaml(admin, "/api/v1/policies", MISMATCHED_YAML);
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ version: 1, valid: false, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const refused = await api(owner).request<{ error: { code: string; details: { findings: Finding[] } } }>(
      "POST",
      "/api/v1/policies/1/activate",
    );
    expectError(refused, 422, "policy_invalid");
    expect(refused.body.error.details.findings[0]).toMatchObject({ path: "credentials[0].allowed_hosts[0]" });
    expect((await api(owner).get<{ policy: null }>("/api/v1/policies/current")).body).toEqual({ policy: null });

    const second = await sendYaml(owner, "/api/v1/policies", RECORDS_POLICY_YAML);
    expect(second.status, second.text).toBe(201);
    expect(second.body).toMatchObject({ version: 2, valid: true, findings: [] });
    const again = await api(owner).post(
      "/api/v1/policies",
      (await api(owner).get<{ document: unknown }>("/api/v1/policies/2")).body.document,
    );
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ version: 2 });

    const activated = await api(owner).request("POST", "/api/v1/policies/2/activate");
    expect(activated.status, activated.text).toBe(200);
    expect(activated.body).toMatchObject({ version: 2, previous: null, changed: true });
    const current = await api(t.apiKey).get<{
      version: number;
      active: boolean;
      source_text: string;
      document: { network: { access: string } };
    }>("/api/v1/policies/current");
    expect(current.body).toMatchObject({ version: 2, active: true, document: { network: { access: "restricted" } } });
    expect(current.body.source_text).toBe(RECORDS_POLICY_YAML);
    const list = await api(viewer).get<{ policies: Array<{ version: number; active: boolean; valid: boolean }> }>(
      "/api/v1/policies",
    );
    expect(list.body.policies.map((p) => [p.version, p.active, p.valid])).toEqual([
      [2, true, true],
      [1, false, false],
    ]);
    const audit = await auditRows(handle.db, t.tenantId);
    expect(audit.filter((a) => a.action.startsWith("policy.")).map((a) => [a.action, a.target])).toEqual([
      ["policy.stored", "policy:1"],
      ["policy.stored", "policy:2"],
      ["policy.activated", "policy:2"],
      // The version approvals bind to moves with it (decision 0026), in the same transaction.
      ["policy.changed", `tenant:${t.tenantId}`],
    ]);
    const same = await api(admin).request("POST", "/api/v1/policies/2/activate");
    expect(same.body).toMatchObject({ changed: false });
    expect((await auditRows(handle.db, t.tenantId, "policy.activated")).length).toBe(1);
  });

  it("refuses the wrong role (403) and the wrong tenant (404)", async () => {
    for (const who of [viewer, responder, t.apiKey, await signInAs(t, "approver")]) {
      expectError(await sendYaml(who, "/api/v1/policies", RECORDS_POLICY_YAML), 403, "forbidden");
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

describe("egress custody against the current policy", () => {
  type Host = {
    host: string;
    allowed: number;
    denied: number;
    drift: boolean;
    in_current_policy: boolean | null;
    tools: string[];
    credential_refs: string[];
    policy_versions: string[];
  };
  type Verdict = { verdict: string; reasons: Array<{ code: string; message: string }> };

  it("shows per host what was allowed and denied, flags drift, and the gate and intents follow the current policy", async () => {
    const t = await createTestTenant(handle.db);
    const owner = await signInAs(t, "owner");
    const taskId = newTaskId("egress");
    const quiet = newTaskId("egress-quiet");
    await checkpoint(t, taskId, { policy_version: "pv-egress" });
    await checkpoint(t, quiet, { policy_version: "pv-quiet" });
    const egress = (type: string, host: string, extra: Record<string, unknown> = {}) =>
      makeEvent(taskId, {
        plane: "tools",
        type,
        attrs: {
          host,
          port: 443,
          policy_version: "pv-egress",
          tool: "update_record",
          credential_ref: "records-api",
          action_class: "mutation",
          outcome: type.split(".")[1],
          ...extra,
        },
      });
    const stored = await postEvents(t.apiKey, [
      egress("egress.allowed", "records.example.com"),
      egress("egress.allowed", "Records.Example.com"),
      egress("egress.allowed", "files.example.com", { tool: "read_file", credential_ref: null }),
      egress("egress.denied", "paste.example.com", { tool: "shell", credential_ref: null, action_class: "read" }),
    ]);
    expect(stored.status, stored.text).toBe(200);

    // No policy active: the facts are shown, drift cannot be judged, the gate says nothing about egress.
    const before = await api(t.apiKey).get<{ current_policy_version: number | null; hosts: Host[] }>(
      `/api/v1/tasks/${taskId}/egress`,
    );
    expect(before.status, before.text).toBe(200);
    expect(before.body.current_policy_version).toBeNull();
    expect(before.body.hosts.map((h) => [h.host, h.allowed, h.denied, h.in_current_policy])).toEqual([
      ["files.example.com", 1, 0, null],
      ["paste.example.com", 0, 1, null],
      ["records.example.com", 2, 0, null],
    ]);
    const ask = async () => (await api(t.apiKey).post<Verdict>(`/api/v1/tasks/${taskId}/resume`, {})).body;
    expect((await ask()).reasons.map((r) => r.code)).not.toContain("egress_policy_inconsistent");

    // A policy that admits records.example.com only: files.example.com is drift, and the gate stops.
    const v1 = await sendYaml(owner, "/api/v1/policies", RECORDS_POLICY_YAML);
    expect((await api(owner).request("POST", `/api/v1/policies/${v1.body.version}/activate`)).status).toBe(200);
    const after = await api(t.apiKey).get<{ current_policy_version: number; hosts: Host[] }>(
      `/api/v1/tasks/${taskId}/egress`,
    );
    const byHost = Object.fromEntries(after.body.hosts.map((h) => [h.host, h]));
    expect(byHost["files.example.com"]).toMatchObject({
      drift: true,
      in_current_policy: false,
      tools: ["read_file"],
      credential_refs: [],
    });
    expect(byHost["records.example.com"]).toMatchObject({
      drift: false,
      in_current_policy: true,
      credential_refs: ["records-api"],
      policy_versions: ["pv-egress"],
    });
    expect(byHost["paste.example.com"]).toMatchObject({ drift: false, in_current_policy: false });
    const stopped = await ask();
    expect(stopped.verdict).toBe("stop");
    const reason = stopped.reasons.find((r) => r.code === "egress_policy_inconsistent");
    expect(reason?.message).toMatch(/files\.example\.com/);
    expect(reason?.message).not.toMatch(/paste\.example\.com/);
    // The intent route answers from the same verdict (for a write the policy's tool list does not put under approval).
    const intent = await api(t.apiKey).post(`/api/v1/tasks/${taskId}/side-effects/write_note/intent`, {
      idempotency_key: `k-${taskId}`,
      payload_digest: "c".repeat(64),
      action: "notes.write",
      attempt: 1,
      mutation: true,
    });
    expectError(intent, 409, "gate_stop");
    // The other task reached nothing: its gate is not held back by this one's drift.
    expect(
      (await api(t.apiKey).post<Verdict>(`/api/v1/tasks/${quiet}/resume`, {})).body.reasons.map((r) => r.code),
    ).not.toContain("egress_policy_inconsistent");

    // A new version that admits the host clears it.
    const admitsFiles = recordsPolicyYaml((d) => {
      d.network.allowed_domains = ["records.example.com", "files.example.com"];
      d.tools.push({ name: "read_file", mutation: false, hosts: ["files.example.com"] });
    });
    const v2 = await sendYaml(owner, "/api/v1/policies", admitsFiles);
    expect(v2.status, v2.text).toBe(201);
    expect(v2.body.findings).toEqual([]);
    expect((await api(owner).request("POST", `/api/v1/policies/${v2.body.version}/activate`)).status).toBe(200);
    expect((await ask()).reasons.map((r) => r.code)).not.toContain("egress_policy_inconsistent");
  });

  it("finds the tasks that reached a host, used a credential or ran under a policy version, in this tenant only", async () => {
    const t = await createTestTenant(handle.db);
    const other = await createTestTenant(handle.db);
    const a = newTaskId("reach-a");
    const b = newTaskId("reach-b");
    await checkpoint(t, a, { policy_version: "pv-search-1" });
    await checkpoint(t, b, { policy_version: "pv-search-2" });
    await checkpoint(other, newTaskId("reach-other"), { policy_version: "pv-search-1" });
    const res = await postEvents(t.apiKey, [
      makeEvent(a, {
        plane: "tools",
        type: "egress.allowed",
        attrs: { host: "api.github.com", port: 443, credential_ref: "github-token" },
      }),
      makeEvent(b, {
        plane: "vault",
        type: "credential.used",
        attrs: { host: "records.example.com", credential_ref: "records-api" },
      }),
    ]);
    expect(res.status, res.text).toBe(200);
    const ids = async (query: string, auth: string = t.apiKey) =>
      (await api(auth).get<{ tasks: Array<{ task_id: string }> }>(`/api/v1/tasks?${query}`)).body.tasks
        .map((x) => x.task_id)
        .sort();
    expect(await ids("host=API.GITHUB.COM")).toEqual([a]);
    expect(await ids("credential_ref=records-api")).toEqual([b]);
    expect(await ids("policy_version=pv-search-1")).toEqual([a]);
    expect(await ids("policy_version=pv-search-1&host=records.example.com")).toEqual([]);
    expect(await ids("host=api.github.com", other.apiKey)).toEqual([]);
    expect(await ids("policy_version=nothing-ran-under-this")).toEqual([]);
  });

  it("finds a version by any name the pages show: 1, v1 and policy-v1 alike; malformed is a 400 naming policy_version (issue 24)", async () => {
    const t = await createTestTenant(handle.db);
    const one = newTaskId("pv-one");
    const two = newTaskId("pv-two");
    const odd = newTaskId("pv-odd");
    await checkpoint(t, one, { policy_version: "policy-v1" });
    await checkpoint(t, two, { policy_version: "v2" });
    await checkpoint(t, odd, { policy_version: "canary-build" });
    const list = (query: string) => api(t.apiKey).get<{ tasks: Array<{ task_id: string }> }>(`/api/v1/tasks?${query}`);
    const ids = async (query: string) => {
      const res = await list(query);
      expect(res.status, res.text).toBe(200);
      return res.body.tasks.map((x) => x.task_id).sort();
    };
    for (const name of ["1", "v1", "V1", "policy-v1", "Policy-V1", "%201%20"])
      expect(await ids(`policy_version=${name}`), name).toEqual([one]);
    expect(await ids("policy_version=2")).toEqual([two]);
    expect(await ids("policy_version=policy-v2")).toEqual([two]);
    expect(await ids("policy_version=3")).toEqual([]);
    expect(await ids("policy_version=canary-build")).toEqual([odd]);
    expect(await ids("policy_version=no-such-version")).toEqual([]);
    for (const bad of ["v", "v0", "0", "1.5", "-1", "policy-v", "a%20b", "x".repeat(101)]) {
      const res = await list(`policy_version=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(JSON.stringify(res.body), bad).toContain("policy_version");
    }
  });
});

describe("revocation, proven", () => {
  it("asks each credential's revocation endpoint and keeps the answer on the vault lane, for the roles that reconcile", async () => {
    const http = await import("node:http");
    const asked: string[] = [];
    const server = http.createServer((req, res) => {
      const u = new URL(req.url ?? "/", "http://x");
      asked.push(`${u.pathname}?${u.searchParams.toString()}`);
      res.setHeader("content-type", "application/json");
      if (u.searchParams.get("credential_ref") === "records-api")
        res.end(JSON.stringify({ revoked: true, revoked_at: "2026-01-02T03:04:05Z", token: "never kept" }));
      else if (u.searchParams.get("credential_ref") === "files-api") res.end(JSON.stringify({ revoked: false }));
      else res.end("<html>maybe</html>");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    try {
      const t = await createTestTenant(handle.db);
      const other = await createTestTenant(handle.db);
      const [owner, responder, viewer] = await Promise.all([
        signInAs(t, "owner"),
        signInAs(t, "responder"),
        signInAs(t, "viewer"),
      ]);
      const taskId = newTaskId("revocation");
      await checkpoint(t, taskId);
      const vault = (type: string, ref: string, extra: Record<string, unknown> = {}) =>
        makeEvent(taskId, { plane: "vault", type, attrs: { credential_ref: ref, ...extra } });
      const res = await postEvents(t.apiKey, [
        vault("credential.issued", "records-api", {
          credential_id: "cred-1",
          scope: "records:write",
          expires_at: "2030-01-01T00:00:00Z",
        }),
        vault("credential.used", "records-api", { credential_id: "cred-1", host: "records.example.com" }),
        vault("credential.used", "records-api", { credential_id: "cred-1", host: "records.example.com" }),
        vault("credential.revoked", "records-api", { credential_id: "cred-1" }),
        vault("credential.issued", "files-api", { credential_id: "cred-2" }),
        vault("credential.issued", "no-endpoint", { credential_id: "cred-3" }),
      ]);
      expect(res.status, res.text).toBe(200);
      const endpoint = `http://127.0.0.1:${port}/revocations`;
      // The records policy with two more credentials, each on a host of its own; two of the three can be checked.
      const doc = recordsPolicy((d) => {
        const records = { ...d.credentials[0]! };
        delete records.scope;
        d.network.allowed_domains = ["records.example.com", "files.example.com", "other.example.com"];
        d.credentials = [
          { ...records, revocation_url: endpoint },
          { name: "files-api", type: "function_tool", allowed_hosts: ["files.example.com"], revocation_url: endpoint },
          { name: "no-endpoint", type: "environment_variable", allowed_hosts: ["other.example.com"] },
        ];
        d.tools = [];
      });
      const stored = await api(owner).post<{ version: number; valid: boolean }>("/api/v1/policies", doc);
      expect(stored.body.valid, stored.text).toBe(true);
      expect((await api(owner).request("POST", `/api/v1/policies/${stored.body.version}/activate`)).status).toBe(200);

      const list = await api(viewer).get<{
        credentials: Array<{
          credential_ref: string;
          used: number;
          can_check: boolean;
          last_revoked_at: string | null;
          scope: string | null;
          last_check: unknown;
        }>;
      }>(`/api/v1/tasks/${taskId}/credentials`);
      expect(list.status, list.text).toBe(200);
      const byRef = Object.fromEntries(list.body.credentials.map((c) => [c.credential_ref, c]));
      expect(byRef["records-api"]).toMatchObject({
        used: 2,
        can_check: true,
        scope: "records:write",
        last_check: null,
      });
      expect(byRef["records-api"]!.last_revoked_at).not.toBeNull();
      expect(byRef["no-endpoint"]).toMatchObject({ can_check: false });

      const check = (auth: Auth, ref: string, task = taskId) =>
        api(auth).request<Record<string, unknown>>("POST", `/api/v1/tasks/${task}/credentials/${ref}/revocation-check`);
      const revoked = await check(responder, "records-api");
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body).toMatchObject({
        outcome: "revoked",
        revoked: true,
        revoked_at: "2026-01-02T03:04:05Z",
        http_status: 200,
        policy_version: stored.body.version,
      });
      expect(asked[0]).toBe("/revocations?credential_ref=records-api&credential_id=cred-1");
      const still = await check(owner, "files-api");
      expect(still.body).toMatchObject({ outcome: "not_revoked", revoked: false });
      expect(String(still.body.message)).toMatch(/NOT revoked/);

      const events = await queryRows<{ plane: string; type: string; attrs: Record<string, unknown> }>(
        handle.db,
        sql`select plane::text as plane, type, attrs from events where tenant_id = ${t.tenantId} and task_id = ${taskId} and type = 'credential.revocation_checked' order by seq`,
      );
      expect(events.map((e) => [e.plane, e.attrs.credential_ref, e.attrs.outcome])).toEqual([
        ["vault", "records-api", "revoked"],
        ["vault", "files-api", "not_revoked"],
      ]);
      expect(JSON.stringify(events)).not.toContain("never kept");
      expect((await auditRows(handle.db, t.tenantId, "credential.revocation_checked")).length).toBe(2);
      const after = await api(viewer).get<{
        credentials: Array<{ credential_ref: string; last_check: { outcome: string } | null }>;
      }>(`/api/v1/tasks/${taskId}/credentials`);
      expect(after.body.credentials.find((c) => c.credential_ref === "records-api")?.last_check?.outcome).toBe(
        "revoked",
      );

      expectError(await check(responder, "no-endpoint"), 422, "validation_failed");
      expectError(await check(responder, "never-held"), 404, "not_found");
      expectError(await check(viewer, "records-api"), 403, "forbidden");
      expectError(await check(t.apiKey, "records-api"), 403, "forbidden");
      expectError(await check(await signInAs(other, "owner"), "records-api"), 404, "not_found");
      expectError(await api(other.apiKey).get(`/api/v1/tasks/${taskId}/credentials`), 404, "not_found");
      expect((await auditRows(handle.db, t.tenantId, "credential.revocation_checked")).length).toBe(2);
    } finally {
      server.close();
    }
  });
});

describe("policy documents behind the approvals' policy version", () => {
  it("activating a stored version moves the version approvals bind to; a version not stored or failing lint cannot become current", async () => {
    const t = await createTestTenant(handle.db);
    const [owner, approver] = await Promise.all([signInAs(t, "owner"), signInAs(t, "approver")]);
    const taskId = newTaskId("policy-seam");
    await checkpoint(t, taskId);
    const boundTo = async () =>
      (await api(owner).get<{ policy_version: string }>("/api/v1/settings/approvals")).body.policy_version;
    const v1 = await sendYaml(owner, "/api/v1/policies", RECORDS_POLICY_YAML);
    expect((await api(owner).request("POST", `/api/v1/policies/${v1.body.version}/activate`)).status).toBe(200);
    expect(await boundTo()).toBe(String(v1.body.version));

    // An approval bound to version 1.
    const intent = {
      idempotency_key: `k-${taskId}`,
      // The digest of the payload sent (the tool defaults to the effect's name; decision 0029 checks it).
      payload_digest: toolCallDigest("publish_report", { report: "r.md" }),
      action: "publish_report",
      attempt: 1,
      mutation: true,
      requires_approval: true,
      payload: { report: "r.md" },
    };
    const asked = await api(t.apiKey).post<{ error: { code: string; details: { approval_id: string } } }>(
      `/api/v1/tasks/${taskId}/side-effects/publish_report/intent`,
      intent,
    );
    expectError(asked, 403, "approval_required");
    const approvalId = asked.body.error.details.approval_id;
    const decided = await api(approver).post(`/api/v1/approvals/${approvalId}/decision`, {
      decision: "approve",
      reason: "fine under v1",
    });
    expect(decided.status, decided.text).toBe(200);

    // A corrected document stored as version 2 is activated: the approval goes stale.
    const v2 = await sendYaml(
      owner,
      "/api/v1/policies",
      recordsPolicyYaml((d) => (d.credentials[0]!.scope = "records:write records:read")),
    );
    expect(v2.body).toMatchObject({ version: 2, valid: true });
    const moved = await api(owner).request<{
      version: number;
      previous: number | null;
      invalidated: Array<{ id: string }>;
    }>("POST", "/api/v1/policies/2/activate");
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ version: 2, previous: 1 });
    expect(moved.body.invalidated.map((i) => i.id)).toEqual([approvalId]);
    const current = await api(owner).get<{ version: number }>("/api/v1/policies/current");
    expect(current.body.version).toBe(2);
    const approval = await api(approver).get<{ status: string; stale_reasons: string[] }>(
      `/api/v1/approvals/${approvalId}`,
    );
    expect(approval.body.status).toBe("stale");
    expect(approval.body.stale_reasons).toContain("policy_changed");

    // A version that is not stored (or fails lint) cannot become current.
    expectError(await api(owner).request("POST", "/api/v1/policies/7/activate"), 404, "not_found");
    const bad = await sendYaml(owner, "/api/v1/policies", MISMATCHED_YAML);
    expectError(
      await api(owner).request("POST", `/api/v1/policies/${bad.body.version}/activate`),
      422,
      "policy_invalid",
    );
    expect(await boundTo()).toBe("2");
    // Rolling back to version 1 is an activation like any other.
    expect((await api(owner).request("POST", "/api/v1/policies/1/activate")).status).toBe(200);
    expect(await boundTo()).toBe("1");
    expect((await api(t.apiKey).get<{ version: number }>("/api/v1/policies/current")).body.version).toBe(1);
  });
});

describe("compaction constraints", () => {
  it("keeps constraints in the signed record; after a compaction the gate replays and mutations wait until they are re-checked", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("compaction");
    const cp = await checkpoint(t, taskId, {
      constraints: ["Never update a record twice.", "Publish only approved reports."],
    });
    const stored = await api(t.apiKey).get<{ record: { constraints: string[] } }>(`/api/v1/tasks/${taskId}`);
    expect(stored.body.record.constraints).toEqual(["Never update a record twice.", "Publish only approved reports."]);
    expect(cp.version).toBe(1);
    type Verdict = { verdict: string; reasons: Array<{ code: string; message: string; target: string }> };
    const ask = async () => (await api(t.apiKey).post<Verdict>(`/api/v1/tasks/${taskId}/resume`, {})).body;
    expect((await ask()).verdict).toBe("resume");

    const compaction = makeEvent(taskId, {
      plane: "session",
      type: "compaction.performed",
      occurred_at: "2026-11-30T10:00:00.000Z",
      attrs: { tokens_before: 180000, tokens_after: 20000 },
    });
    expect((await postEvents(t.apiKey, [compaction])).status).toBe(200);
    const replay = await ask();
    expect(replay.verdict).toBe("replay");
    expect(replay.reasons[0]).toMatchObject({
      code: "constraints_unchecked",
      target: `/tasks/${taskId}?event=${encodeURIComponent(compaction.id)}`,
    });
    const intent = (key: string, mutation: boolean) =>
      api(t.apiKey).post(`/api/v1/tasks/${taskId}/side-effects/${mutation ? "update_record" : "read_record"}/intent`, {
        idempotency_key: key,
        payload_digest: "e".repeat(64),
        action: mutation ? "update_record" : "read_record",
        attempt: 1,
        mutation,
      });
    expectError(await intent(`w-${taskId}`, true), 409, "gate_replay");
    expect((await intent(`r-${taskId}`, false)).status).toBe(200);

    // A check whose runtime clock says it came before the compaction still counts: receive order decides.
    const checked = makeEvent(taskId, {
      plane: "session",
      type: "constraint.checked",
      occurred_at: "2026-11-30T09:00:00.000Z",
      attrs: { constraints: 2, ok: true },
    });
    expect((await postEvents(t.apiKey, [checked])).status).toBe(200);
    expect((await ask()).reasons.map((r) => r.code)).not.toContain("constraints_unchecked");
    expect((await intent(`w-${taskId}`, true)).status).toBe(200);

    // A later compaction holds writes back again.
    expect(
      (await postEvents(t.apiKey, [makeEvent(taskId, { plane: "session", type: "compaction.performed", attrs: {} })]))
        .status,
    ).toBe(200);
    expect((await ask()).reasons.map((r) => r.code)).toContain("constraints_unchecked");
  });
});
