/**
 * What changed between two policy versions, as people review it: hosts added to and removed from each host list
 * (the sandbox's `allowed_domains`, each credential's `allowed_hosts`, each tool's `hosts`), the network access
 * level, and credentials and tools added, removed or changed. Pure; no database.
 */
import { canonicalJson } from "../crypto/canonical";
import type { PolicyDocument } from "./document";

export type HostListDiff = { list: string; added: string[]; removed: string[]; kept: string[] };
export type NamedDiff = { added: string[]; removed: string[]; changed: string[] };
export type PolicyDiff = {
  access: { from: string; to: string } | null;
  hosts: HostListDiff[];
  credentials: NamedDiff;
  tools: NamedDiff;
  /** True when nothing differs. */
  same: boolean;
};

const norm = (h: string) => h.trim().toLowerCase().replace(/\.$/, "");

function listDiff(list: string, from: string[], to: string[]): HostListDiff {
  const a = new Set(from.map(norm));
  const b = new Set(to.map(norm));
  return {
    list,
    added: [...b].filter((h) => !a.has(h)).sort(),
    removed: [...a].filter((h) => !b.has(h)).sort(),
    kept: [...b].filter((h) => a.has(h)).sort(),
  };
}

function namedDiff<T extends { name: string }>(from: T[], to: T[]): NamedDiff {
  const a = new Map(from.map((x) => [x.name, canonicalJson(x)]));
  const b = new Map(to.map((x) => [x.name, canonicalJson(x)]));
  return {
    added: [...b.keys()].filter((n) => !a.has(n)),
    removed: [...a.keys()].filter((n) => !b.has(n)),
    changed: [...b.keys()].filter((n) => a.has(n) && a.get(n) !== b.get(n)),
  };
}

/** The differences from `from` (older) to `to` (newer). A host list present in only one of them diffs against []. */
export function diffPolicies(from: PolicyDocument, to: PolicyDocument): PolicyDiff {
  const hosts: HostListDiff[] = [
    listDiff("network.allowed_domains", from.network.allowed_domains, to.network.allowed_domains),
  ];
  const credNames = [...new Set([...from.credentials.map((c) => c.name), ...to.credentials.map((c) => c.name)])];
  for (const name of credNames) {
    hosts.push(
      listDiff(
        `credentials "${name}" allowed_hosts`,
        from.credentials.find((c) => c.name === name)?.allowed_hosts ?? [],
        to.credentials.find((c) => c.name === name)?.allowed_hosts ?? [],
      ),
    );
  }
  const toolNames = [...new Set([...from.tools.map((t) => t.name), ...to.tools.map((t) => t.name)])];
  for (const name of toolNames) {
    const d = listDiff(
      `tools "${name}" hosts`,
      from.tools.find((t) => t.name === name)?.hosts ?? [],
      to.tools.find((t) => t.name === name)?.hosts ?? [],
    );
    if (d.added.length || d.removed.length || d.kept.length) hosts.push(d);
  }
  const access =
    from.network.access === to.network.access ? null : { from: from.network.access, to: to.network.access };
  const credentials = namedDiff(from.credentials, to.credentials);
  const tools = namedDiff(from.tools, to.tools);
  const same =
    !access &&
    hosts.every((h) => !h.added.length && !h.removed.length) &&
    [credentials, tools].every((d) => !d.added.length && !d.removed.length && !d.changed.length);
  return { access, hosts, credentials, tools, same };
}
