/**
 * Policy lint (docs/concepts.md#policy-versions-and-lint): the checks that make a host-list mismatch a deployment error
 * rather than something found mid-run. A finding of severity `error` blocks activation; a `warning` does not.
 *
 * Rules (each finding names the field path and how to fix it):
 * - `host_not_exact` (error): an entry of `network.allowed_domains`, `credentials[i].allowed_hosts` or
 *   `tools[i].hosts` carries a scheme, path, port, wildcard or is not a host name. Proxies match exact names.
 * - `credential_host_not_allowed` (error): an `environment_variable` credential names a host the sandbox may not
 *   reach (not in `allowed_domains` under `restricted` access): the proxy would hold a credential for a host the
 *   run can never call.
 * - `network_none_with_credential` (error): access `none` while an `environment_variable` credential is declared.
 * - `credential_transport` (error): an `environment_variable` credential over anything but HTTPS on 443 or 8443
 *   (proxies supply credentials only there).
 * - `duplicate_name` (error): two credentials or two tools share a name (references would be ambiguous).
 * - `domain_without_purpose` (warning): an allowed domain that no credential and no tool names: the sandbox can
 *   reach it with no declared reason.
 * - `mutation_without_approval` (warning): a tool that writes without `requires_approval`.
 * - `tool_host_not_allowed` (warning): under `restricted` access, a tool names a host (`tools[i].hosts[j]`) that is
 *   not in `allowed_domains`: a call from the sandbox can never reach it (a warning, not an error: the application may
 *   call that tool outside the sandbox).
 * - `open_network_with_credential` (warning): access `open` with an environment credential: the sandbox can reach
 *   any host, so only the credential's own host list narrows where its requests go.
 */
import { readPolicyText, readPolicyValue, type PolicyDocument, type PolicyFinding } from "./document";

/** The result of linting one document: `valid` is false when any finding is an error. */
export type LintResult = { valid: boolean; findings: PolicyFinding[]; document: PolicyDocument | null };

/** Lints a document given as text (JSON or YAML). Throws what {@link readPolicyText} throws. */
export function lintPolicyText(text: string, format: "json" | "yaml"): LintResult {
  return lintParsed(readPolicyText(text, format));
}

/**
 * Lints a document already parsed from JSON. Throws what {@link readPolicyValue} throws.
 * @internal The routes lint text ({@link lintPolicyText}, which ends in the same readPolicyValue); the unit tests
 *   lint documents built as values.
 */
export function lintPolicyValue(value: unknown): LintResult {
  return lintParsed(readPolicyValue(value));
}

function lintParsed(parsed: ReturnType<typeof readPolicyValue>): LintResult {
  if (!parsed.document) return { valid: false, findings: parsed.findings, document: null };
  const findings = lintPolicy(parsed.document);
  return { valid: !findings.some((f) => f.severity === "error"), findings, document: parsed.document };
}

/** Every lint finding of a well-shaped document, errors first, each group in document order. */
export function lintPolicy(doc: PolicyDocument): PolicyFinding[] {
  const out: PolicyFinding[] = [];
  const error = (rule: string, path: string, message: string) => out.push({ severity: "error", rule, path, message });
  const warning = (rule: string, path: string, message: string) =>
    out.push({ severity: "warning", rule, path, message });

  const hostLists: Array<[string, string[]]> = [
    ["network.allowed_domains", doc.network.allowed_domains],
    ...doc.credentials.map((c, i): [string, string[]] => [`credentials[${i}].allowed_hosts`, c.allowed_hosts]),
    ...doc.tools.map((t, i): [string, string[]] => [`tools[${i}].hosts`, t.hosts]),
  ];
  for (const [base, hosts] of hostLists) {
    hosts.forEach((h, j) => {
      const why = hostProblem(h);
      if (why) error("host_not_exact", `${base}[${j}]`, `"${shown(h)}" ${why}`);
    });
  }

  const allowed = new Set(doc.network.allowed_domains.map(normalHost));
  const envCredentials = doc.credentials.map((c, i) => ({ c, i })).filter(({ c }) => c.type === "environment_variable");

  if (doc.network.access === "none") {
    for (const { c, i } of envCredentials) {
      error(
        "network_none_with_credential",
        `credentials[${i}].type`,
        `network.access is none, but the environment credential "${c.name}" needs the sandbox to reach its hosts; set network.access to restricted and list its hosts in network.allowed_domains, or make it a function_tool credential the application keeps.`,
      );
    }
  }
  if (doc.network.access === "restricted") {
    for (const { c, i } of envCredentials) {
      c.allowed_hosts.forEach((h, j) => {
        if (hostProblem(h) === null && !allowed.has(normalHost(h))) {
          error(
            "credential_host_not_allowed",
            `credentials[${i}].allowed_hosts[${j}]`,
            `"${shown(h)}" is not in network.allowed_domains, so the sandbox can never reach it with "${c.name}"; add it to network.allowed_domains or remove it from this credential.`,
          );
        }
      });
    }
  }
  if (doc.network.access === "open") {
    for (const { c, i } of envCredentials) {
      warning(
        "open_network_with_credential",
        `credentials[${i}]`,
        `network.access is open while "${c.name}" is supplied to the sandbox: it can reach any host; prefer restricted access with the hosts listed.`,
      );
    }
  }
  for (const { c, i } of envCredentials) {
    if (c.protocol.toLowerCase() !== "https") {
      error(
        "credential_transport",
        `credentials[${i}].protocol`,
        `"${c.name}" is sent over ${shown(c.protocol)}; credentials are proxied only over https: set protocol to https.`,
      );
    }
    if (c.port !== 443 && c.port !== 8443) {
      error(
        "credential_transport",
        `credentials[${i}].port`,
        `"${c.name}" uses port ${c.port}; credentials are proxied only to HTTPS on 443 or 8443: set port to 443 or 8443.`,
      );
    }
  }
  duplicates(
    doc.credentials.map((c) => c.name),
    "credentials",
    "credential",
    error,
  );
  duplicates(
    doc.tools.map((t) => t.name),
    "tools",
    "tool",
    error,
  );

  const purposeful = new Set<string>();
  for (const c of doc.credentials) for (const h of c.allowed_hosts) purposeful.add(normalHost(h));
  for (const t of doc.tools) {
    for (const h of t.hosts) purposeful.add(normalHost(h));
    const lookupHost = t.lookup_url ? urlHost(t.lookup_url) : null;
    if (lookupHost) purposeful.add(lookupHost);
  }
  if (doc.network.access !== "none") {
    doc.network.allowed_domains.forEach((h, j) => {
      if (hostProblem(h) === null && !purposeful.has(normalHost(h))) {
        warning(
          "domain_without_purpose",
          `network.allowed_domains[${j}]`,
          `"${shown(h)}" is reachable, but no credential and no tool names it; add it to the hosts of the tool that calls it, or remove it.`,
        );
      }
    });
  }
  if (doc.network.access === "restricted") {
    doc.tools.forEach((t, i) => {
      t.hosts.forEach((h, j) => {
        if (hostProblem(h) === null && !allowed.has(normalHost(h))) {
          warning(
            "tool_host_not_allowed",
            `tools[${i}].hosts[${j}]`,
            `"${shown(h)}" is not in network.allowed_domains, so "${t.name}" cannot reach it from the sandbox; add it to network.allowed_domains, or remove it if the application calls this tool outside the sandbox.`,
          );
        }
      });
    });
  }
  doc.tools.forEach((t, i) => {
    if (t.mutation && !t.requires_approval) {
      warning(
        "mutation_without_approval",
        `tools[${i}].requires_approval`,
        `"${t.name}" writes outside the sandbox without an approval; set requires_approval: true unless its writes are safe to repeat unattended.`,
      );
    }
  });
  return [...out.filter((f) => f.severity === "error"), ...out.filter((f) => f.severity === "warning")];
}

/** Why `h` is not an exact host name, or null. Exact: lowercase letters, digits, hyphens and dots; no scheme etc. */
export function hostProblem(h: string): string | null {
  const v = h.trim();
  if (!v) return "is empty; write a host name such as records.example.com";
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v))
    return `has a scheme; write only the host name (${shown(v.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").split(/[/:?#]/)[0] ?? "")})`;
  if (v.includes("*")) return "has a wildcard; list each exact host name instead";
  if (/[/?#]/.test(v)) return `has a path; write only the host name (${shown(v.split(/[/?#]/)[0] ?? "")})`;
  if (/:\d*$/.test(v) && !v.startsWith("["))
    return `has a port; write only the host name (${shown(v.replace(/:\d*$/, ""))}) and set the credential's port`;
  if (
    v.length > 253 ||
    !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i.test(v)
  ) {
    return "is not a host name; use letters, digits, hyphens and dots, e.g. records.example.com";
  }
  return null;
}

function normalHost(h: string): string {
  return h.trim().toLowerCase().replace(/\.$/, "");
}

function urlHost(u: string): string | null {
  try {
    return normalHost(new URL(u).hostname);
  } catch {
    return null;
  }
}

function duplicates(
  names: string[],
  base: string,
  what: string,
  error: (rule: string, path: string, message: string) => void,
): void {
  const seen = new Map<string, number>();
  names.forEach((n, i) => {
    const key = n.toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else
      error(
        "duplicate_name",
        `${base}[${i}].name`,
        `another ${what} is already named "${shown(n)}" (${base}[${first}]); give each ${what} its own name.`,
      );
  });
}

/** Text from a document for a message: at most 80 characters. */
function shown(v: string): string {
  return v.length > 80 ? `${v.slice(0, 77)}…` : v;
}
