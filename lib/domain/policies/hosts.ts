/** Which hosts a policy document lets a sandbox reach (docs/concepts.md#policy-versions-and-lint). */
import type { PolicyDocument } from "./document";

const norm = (h: string) => h.trim().toLowerCase().replace(/\.$/, "");

/** Whether `doc` lets the sandbox reach `host`: `open` any host, `none` no host, `restricted` the listed ones. */
export function policyAllowsHost(doc: PolicyDocument, host: string): boolean {
  if (doc.network.access === "open") return true;
  if (doc.network.access === "none") return false;
  const h = norm(host);
  return doc.network.allowed_domains.some((d) => norm(d) === h);
}
