/**
 * Policy lint (docs/concepts.md#policy-versions-and-lint): a table of good and bad documents, one per rule, each with
 * its fix; YAML and JSON read alike; shape problems at their field path; reserved keys and credential values refused.
 */
import { describe, expect, it } from "vitest";
import { DomainError } from "@/lib/domain/errors";
import { hostProblem, lintPolicyText, lintPolicyValue } from "@/lib/domain/policies/lint";
import { RECORDS_POLICY_YAML, recordsPolicy } from "../support/policy-document";

// The documents: the shared example (tests/support/policy-document.ts), which passes lint with no finding, and
// variants derived from it, one per rule.
type Doc = Record<string, unknown>;

describe("policy lint", () => {
  it("passes the shared example document (YAML) and the same document as JSON", () => {
    const yaml = lintPolicyText(RECORDS_POLICY_YAML, "yaml");
    expect(yaml).toMatchObject({ valid: true, findings: [] });
    const json = lintPolicyText(JSON.stringify(recordsPolicy()), "json");
    expect(json).toMatchObject({ valid: true, findings: [] });
    expect(json.document).toEqual(yaml.document);
  });

  const cases: Array<{
    name: string;
    doc: Doc;
    rule: string;
    severity: "error" | "warning";
    path: string;
    says: RegExp;
    fix: (d: Doc) => Doc;
  }> = [
    {
      name: "a credential host with a scheme",
      doc: recordsPolicy((d) => (d.credentials[0]!.allowed_hosts = ["https://records.example.com"])),
      rule: "host_not_exact",
      severity: "error",
      path: "credentials[0].allowed_hosts[0]",
      says: /has a scheme; write only the host name \(records\.example\.com\)/,
      fix: () => recordsPolicy(),
    },
    {
      name: "an allowed domain with a path",
      doc: recordsPolicy((d) => (d.network.allowed_domains = ["records.example.com/api"])),
      rule: "host_not_exact",
      severity: "error",
      path: "network.allowed_domains[0]",
      says: /has a path/,
      fix: () => recordsPolicy(),
    },
    {
      name: "a host with a port",
      doc: recordsPolicy((d) => (d.credentials[0]!.allowed_hosts = ["records.example.com:8443"])),
      rule: "host_not_exact",
      severity: "error",
      path: "credentials[0].allowed_hosts[0]",
      says: /has a port; .*set the credential's port/,
      fix: () => recordsPolicy((d) => (d.credentials[0]!.port = 8443)),
    },
    {
      name: "a wildcard domain",
      doc: recordsPolicy((d) => (d.network.allowed_domains = ["*.example.com", "records.example.com"])),
      rule: "host_not_exact",
      severity: "error",
      path: "network.allowed_domains[0]",
      says: /wildcard; list each exact host name/,
      fix: () => recordsPolicy(),
    },
    {
      name: "a tool host the sandbox cannot reach",
      doc: recordsPolicy((d) => (d.tools[0]!.hosts = ["records.example.com", "files.example.com"])),
      rule: "tool_host_not_allowed",
      severity: "warning",
      path: "tools[0].hosts[1]",
      says: /"files\.example\.com" is not in network\.allowed_domains, so ".*" cannot reach it from the sandbox/,
      fix: () =>
        recordsPolicy(
          (d) => (
            (d.network.allowed_domains = ["records.example.com", "files.example.com"]),
            (d.tools[0]!.hosts = ["records.example.com", "files.example.com"])
          ),
        ),
    },
    {
      name: "a credential host the sandbox cannot reach",
      doc: recordsPolicy((d) => (d.credentials[0]!.allowed_hosts = ["records.example.com", "files.example.com"])),
      rule: "credential_host_not_allowed",
      severity: "error",
      path: "credentials[0].allowed_hosts[1]",
      says: /"files\.example\.com" is not in network\.allowed_domains.*add it to network\.allowed_domains or remove it/,
      fix: () =>
        recordsPolicy(
          (d) => (
            (d.network.allowed_domains = ["records.example.com", "files.example.com"]),
            (d.credentials[0]!.allowed_hosts = ["records.example.com", "files.example.com"])
          ),
        ),
    },
    {
      name: "no network while an environment credential is declared",
      doc: recordsPolicy((d) => (d.network.access = "none")),
      rule: "network_none_with_credential",
      severity: "error",
      path: "credentials[0].type",
      says: /network\.access is none.*set network\.access to restricted/,
      fix: () =>
        recordsPolicy(
          (d) => (
            (d.network.access = "none"),
            (d.network.allowed_domains = []),
            (d.credentials[0]!.type = "function_tool")
          ),
        ),
    },
    {
      name: "a credential over plain HTTP",
      doc: recordsPolicy((d) => (d.credentials[0]!.protocol = "http")),
      rule: "credential_transport",
      severity: "error",
      path: "credentials[0].protocol",
      says: /only over https/,
      fix: () => recordsPolicy(),
    },
    {
      name: "a credential on port 80",
      doc: recordsPolicy((d) => (d.credentials[0]!.port = 80)),
      rule: "credential_transport",
      severity: "error",
      path: "credentials[0].port",
      says: /443 or 8443/,
      fix: () => recordsPolicy((d) => (d.credentials[0]!.port = 8443)),
    },
    {
      name: "two tools with one name",
      doc: recordsPolicy((d) => d.tools.push({ name: "Update_Record", mutation: false })),
      rule: "duplicate_name",
      severity: "error",
      path: "tools[1].name",
      says: /already named/,
      fix: () => recordsPolicy((d) => d.tools.push({ name: "read_record", mutation: false })),
    },
    {
      name: "a domain no credential or tool names (warning)",
      doc: recordsPolicy((d) => (d.network.allowed_domains = ["records.example.com", "pypi.org"])),
      rule: "domain_without_purpose",
      severity: "warning",
      path: "network.allowed_domains[1]",
      says: /no credential and no tool names it/,
      fix: () =>
        recordsPolicy(
          (d) => (
            (d.network.allowed_domains = ["records.example.com", "pypi.org"]),
            d.tools.push({ name: "pip_install", mutation: false, hosts: ["pypi.org"] })
          ),
        ),
    },
    {
      name: "a mutation tool without approval (warning)",
      doc: recordsPolicy((d) => (d.tools[0]!.requires_approval = false)),
      rule: "mutation_without_approval",
      severity: "warning",
      path: "tools[0].requires_approval",
      says: /set requires_approval: true/,
      fix: () => recordsPolicy(),
    },
    {
      name: "open network with an environment credential (warning)",
      doc: recordsPolicy((d) => (d.network.access = "open")),
      rule: "open_network_with_credential",
      severity: "warning",
      path: "credentials[0]",
      says: /can reach any host/,
      fix: () => recordsPolicy(),
    },
  ];

  for (const c of cases) {
    it(`${c.name}: ${c.severity} ${c.rule} at ${c.path}, gone once fixed`, () => {
      const out = lintPolicyValue(c.doc);
      const finding = out.findings.find((f) => f.rule === c.rule && f.path === c.path);
      expect(finding, JSON.stringify(out.findings)).toBeDefined();
      expect(finding!.severity).toBe(c.severity);
      expect(finding!.message).toMatch(c.says);
      expect(out.valid).toBe(c.severity !== "error");
      const fixed = lintPolicyValue(c.fix(c.doc));
      expect(fixed.findings.filter((f) => f.rule === c.rule)).toEqual([]);
      expect(fixed.valid).toBe(true);
    });
  }

  it("lists errors before warnings, and every finding of a document at once", () => {
    const out = lintPolicyValue(
      recordsPolicy((d) => {
        d.tools[0]!.requires_approval = false;
        d.credentials[0]!.allowed_hosts = ["https://a.example.com", "b.example.com"];
      }),
    );
    expect(out.findings.map((f) => [f.severity, f.rule, f.path])).toEqual([
      ["error", "host_not_exact", "credentials[0].allowed_hosts[0]"],
      ["error", "credential_host_not_allowed", "credentials[0].allowed_hosts[1]"],
      ["warning", "domain_without_purpose", "network.allowed_domains[0]"],
      ["warning", "mutation_without_approval", "tools[0].requires_approval"],
    ]);
  });

  it("reports a wrong shape at its field path, in YAML too", () => {
    const out = lintPolicyText(
      "network:\n  access: sometimes\ncredentials:\n  - name: x\n    type: env\n    allowed_hosts: [1]\n",
      "yaml",
    );
    expect(out.valid).toBe(false);
    expect(out.findings.map((f) => f.path)).toEqual(
      expect.arrayContaining(["network.access", "credentials[0].type", "credentials[0].allowed_hosts[0]"]),
    );
    expect(out.findings.every((f) => f.rule === "schema" && f.severity === "error")).toBe(true);
    expect(lintPolicyValue({ network: { access: "restricted" }, extra: 1 }).findings[0]).toMatchObject({
      message: expect.stringMatching(/unknown field "extra"/),
    });
  });

  it("refuses numbers JSON cannot carry exactly and a document that is not an object, naming the path", () => {
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as { code: string; message: string; details?: { fields: Array<{ path: string }> } };
      }
      throw new Error("not refused");
    };
    const base =
      "network:\n  access: open\ncredentials: []\ntools:\n  - name: t\n    mutation: false\n    hosts: [a]\n";
    for (const [text, format, path] of [
      [
        '{"network": {"access": "open", "allowed_domains": []}, "tools": [{"name": "t", "mutation": 1e400}]}',
        "json",
        "tools[0].mutation",
      ],
      [
        '{"network": {"access": "open"}, "credentials": [{"name": "k", "type": "function_tool", "ttl": 123456789012345678901234567890}]}',
        "json",
        "credentials[0].ttl",
      ],
      [`${base}    approval_ttl: .inf\n`, "yaml", "tools[0].approval_ttl"],
      [`${base}    approval_ttl: .nan\n`, "yaml", "tools[0].approval_ttl"],
      [`${base}    approval_ttl: 1e400\n`, "yaml", "tools[0].approval_ttl"],
      [`${base}    approval_ttl: 123456789012345678901234567890\n`, "yaml", "tools[0].approval_ttl"],
      [`${base}    approval_ttl: 0x20000000000001\n`, "yaml", "tools[0].approval_ttl"],
      ["network:\n  access: open\n  allowed_domains: [a, -.INF]\n", "yaml", "network.allowed_domains[1]"],
    ] as const) {
      const e = refusal(() => lintPolicyText(text, format));
      expect(e.code, text).toBe("validation_failed");
      expect(e.details?.fields[0]?.path, text).toBe(path);
      expect(e.message).toContain(path);
    }
    for (const [text, format] of [
      ["[1, 2]", "json"],
      ['"x"', "json"],
      ["null", "json"],
      ["- 1\n- 2\n", "yaml"],
      ["x\n", "yaml"],
      ["# only a comment\n", "yaml"],
    ] as const) {
      const e = refusal(() => lintPolicyText(text, format));
      expect(e.code, text).toBe("validation_failed");
      expect(e.message).toMatch(/The policy must be an object with network, credentials and tools, not /);
    }
    expect(refusal(() => lintPolicyValue([])).code).toBe("validation_failed");
    // Numbers a double carries exactly still read as numbers, in YAML as in JSON.
    expect(lintPolicyText(`${base}    approval_ttl: 3600\n`, "yaml").document?.tools[0]?.approval_ttl).toBe(3600);
    expect(lintPolicyText(`${base}    approval_ttl: 0x10\n`, "yaml").document?.tools[0]?.approval_ttl).toBe(16);
    expect(lintPolicyText(`${base}    approval_ttl: +36e2\n`, "yaml").document?.tools[0]?.approval_ttl).toBe(3600);
  });

  it("refuses text that is not YAML or JSON, reserved keys, and credential values", () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof DomainError ? `${e.code}: ${e.message}` : String(e);
      }
      return "no error";
    };
    expect(code(() => lintPolicyText("network: [unclosed", "yaml"))).toMatch(
      /^invalid_json: The policy is not valid YAML \(line/,
    );
    expect(code(() => lintPolicyText("network:\n  access: open\nnetwork:\n  access: none\n", "yaml"))).toMatch(
      /^invalid_json/,
    );
    expect(code(() => lintPolicyText("{", "json"))).toMatch(/^invalid_json/);
    expect(code(() => lintPolicyText('{"network": {"access": "open", "__proto__": {"x": 1}}}', "json"))).toMatch(
      /^validation_failed: network\.__proto__ uses the key "__proto__", which is not accepted/,
    );
    expect(code(() => lintPolicyText('{"network": {"access": "open", "access": "none"}}', "json"))).toMatch(
      /^validation_failed: network\.access repeats the key "access"/,
    );
    expect(code(() => lintPolicyText("tools:\n  - constructor: 1\n", "yaml"))).toMatch(
      /^validation_failed: tools\[0\]\.constructor/,
    );
    const aliases = `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from(
      { length: 12 },
      (_, i) =>
        `b${i}: &b${i} [${Array(10)
          .fill(i ? `*b${i - 1}` : "*a")
          .join(", ")}]`,
    ).join("\n")}\n`;
    expect(code(() => lintPolicyText(aliases, "yaml"))).toMatch(/^invalid_json/);
    const secret = recordsPolicy((d) => (d.credentials[0]!.scope = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"));
    expect(code(() => lintPolicyValue(secret))).toMatch(
      /^validation_failed: credentials\[0\]\.scope: looks like a credential value/,
    );
  });

  it("knows an exact host name", () => {
    for (const ok of ["records.example.com", "localhost", "a-b.c0.example", "EXAMPLE.com."])
      expect(hostProblem(ok), ok).toBeNull();
    for (const bad of [
      "",
      " ",
      "http://x.com",
      "x.com/",
      "x.com?q",
      "x.com:443",
      "*.x.com",
      "x..com",
      "-x.com",
      "x_y.com",
      "user@x.com",
      "[::1]",
    ]) {
      expect(hostProblem(bad), bad).not.toBeNull();
    }
  });
});

describe("policy findings placed at their line, and the diff between versions", () => {
  it("finds the line of a field in YAML and in JSON, or of its nearest parent", async () => {
    const { linesOfPaths, pathSegments } = await import("@/lib/domain/policies/locate");
    expect(pathSegments('credentials[0].allowed_hosts[12]["odd key"]')).toEqual([
      "credentials",
      0,
      "allowed_hosts",
      12,
      "odd key",
    ]);
    const yamlLines = linesOfPaths(RECORDS_POLICY_YAML, [
      "credentials[0].allowed_hosts[0]",
      "tools[0].requires_approval",
      "tools[0].lookup_url",
      "",
    ]);
    expect(yamlLines.get("credentials[0].allowed_hosts[0]")).toBe(8);
    expect(yamlLines.get("tools[0].requires_approval")).toBe(13);
    expect(yamlLines.get("tools[0].lookup_url")).toBe(11);
    expect(yamlLines.has("")).toBe(false);
    const json = JSON.stringify(recordsPolicy(), null, 2);
    const jsonLine = linesOfPaths(json, ["network.allowed_domains[0]"]).get("network.allowed_domains[0]")!;
    expect(json.split("\n")[jsonLine - 1]).toContain('"records.example.com"');
  });

  it("lists hosts added and removed per list, and credentials and tools changed", async () => {
    const { diffPolicies } = await import("@/lib/domain/policies/diff");
    const a = lintPolicyValue(recordsPolicy()).document!;
    const b = lintPolicyValue(
      recordsPolicy((d) => {
        d.network.allowed_domains = ["records.example.com", "files.example.com"];
        d.credentials[0]!.allowed_hosts = ["files.example.com"];
        d.tools.push({ name: "read_file", mutation: false, hosts: ["files.example.com"] });
      }),
    ).document!;
    const diff = diffPolicies(a, b);
    expect(diff.same).toBe(false);
    expect(diff.hosts[0]).toEqual({
      list: "network.allowed_domains",
      added: ["files.example.com"],
      removed: [],
      kept: ["records.example.com"],
    });
    expect(diff.hosts[1]).toMatchObject({
      list: 'credentials "records-api" allowed_hosts',
      added: ["files.example.com"],
      removed: ["records.example.com"],
    });
    expect(diff.credentials).toEqual({ added: [], removed: [], changed: ["records-api"] });
    expect(diff.tools).toEqual({ added: ["read_file"], removed: [], changed: [] });
    expect(diffPolicies(a, a).same).toBe(true);
  });
});
