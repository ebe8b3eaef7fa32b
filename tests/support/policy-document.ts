/**
 * The policy document the suites share: a restricted network that admits the records service, its environment
 * credential, and the mutating tool that writes records. As YAML the way an author writes it (a
 * comment, flow lists), and as a value; a test that needs a variant derives it from the value with a patch.
 * Used by tests/unit/policy-lint.test.ts, tests/integration/policies.test.ts, tests/integration/vault-custody.test.ts,
 * tests/integration/exercise-revocation.test.ts and e2e/policies.spec.ts.
 */
import YAML from "yaml";

/**
 * The document as YAML. The comment stays in the stored source text; the line numbers are read by the lint test
 * (`credentials[0].allowed_hosts[0]` on line 8, `tools[0]` on 11, `tools[0].requires_approval` on 13).
 */
export const RECORDS_POLICY_YAML = `# The demo's records service, by host name.
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

type Fields = Record<string, unknown>;

/** A policy document as a plain value, open to any change a variant makes (including invalid ones, for lint). */
export type PolicyFixture = Fields & { network: Fields; credentials: Fields[]; tools: Fields[] };

/** The same document as {@link RECORDS_POLICY_YAML}, as a value. */
const RECORDS_POLICY: PolicyFixture = {
  network: { access: "restricted", allowed_domains: ["records.example.com"] },
  credentials: [
    {
      name: "records-api",
      type: "environment_variable",
      allowed_hosts: ["records.example.com"],
      scope: "records:write",
    },
  ],
  tools: [{ name: "update_record", mutation: true, requires_approval: true }],
};

/**
 * A fresh copy of the shared document, changed by `patch` when given (a variant derived from it).
 * @example recordsPolicy((d) => (d.network.access = "open"))
 */
export function recordsPolicy(patch?: (d: PolicyFixture) => void): PolicyFixture {
  const d = structuredClone(RECORDS_POLICY);
  patch?.(d);
  return d;
}

/** A variant of the shared document as YAML text, for the routes that read `application/yaml`. */
export function recordsPolicyYaml(patch: (d: PolicyFixture) => void): string {
  return YAML.stringify(recordsPolicy(patch));
}

/**
 * A document that restricts nothing (open network, no credentials), distinct for each `n` (its digest differs, so
 * storing `n = 1, 2, …` gives as many versions): for tests that only need a policy version to activate, so that
 * approvals bound to another one go stale, without the policy's own rules touching the gate.
 */
export function openPolicy(n: number): PolicyFixture {
  return { network: { access: "open" }, credentials: [], tools: [{ name: `policy-variant-${n}`, mutation: false }] };
}
