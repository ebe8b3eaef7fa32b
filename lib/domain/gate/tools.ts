/**
 * Tool definitions as the server holds them (docs/concepts.md#tool-definitions, decision 0033): one pure rule, read by
 * the gate (`tool_definition_changed`), by approval freshness (an approval binds its tool's definition) and by the
 * accept verb. The accepted definition of a tool is the one the first checkpoint naming it carried, or the one a person
 * accepted since. A definition reported after that (a `tool.definition_changed` event, a later checkpoint, a resume
 * body) that differs is a change, and stays one until a person accepts a definition: the runtime's own word (a
 * checkpoint carrying the new digest, an event reporting the old one again) never ends it. What a caller sends in a
 * resume body can only add a change, never hide one the server holds.
 */
import { canonicalName } from "../names";

/** A tool's accepted definition: its digest and the server time from which reports count against it. */
export type AcceptedToolDefinition = { tool: string; digest: string; since: string | null };

/** One report of a tool's definition, in the server's receive order (a request's own body last). */
export type ToolDefinitionReport = {
  tool: string;
  digest: string;
  source: "event" | "checkpoint" | "request";
  /** When the server received it (ISO UTC); null for the asking request itself. */
  received_at: string | null;
};

/** One tool whose reported definition is not the accepted one. */
export type ToolDefinitionChange = {
  tool: string;
  accepted: string;
  /** The latest differing definition the server received (or, failing that, the one the request names). */
  reported: string;
  source: ToolDefinitionReport["source"];
};

/**
 * The tools whose definition changed (pure): for each tool with an accepted definition, the reports received since it
 * (all of a request's) that differ from it; the latest server report among them names the new definition. Tool names
 * compare in canonical form. A tool without an accepted definition has nothing to change from.
 */
export function toolDefinitionChanges(
  accepted: readonly AcceptedToolDefinition[],
  reports: readonly ToolDefinitionReport[],
): ToolDefinitionChange[] {
  const byTool = new Map(accepted.map((a) => [canonicalName(a.tool), a]));
  const found = new Map<string, ToolDefinitionChange>();
  for (const r of reports) {
    const tool = canonicalName(r.tool);
    const a = byTool.get(tool);
    if (!a || r.digest === a.digest) continue;
    if (r.received_at !== null && a.since !== null && r.received_at < a.since) continue;
    const prior = found.get(tool);
    // A server report outranks the request's own claim; among server reports the latest received wins.
    if (prior && prior.source !== "request" && r.source === "request") continue;
    found.set(tool, { tool, accepted: a.digest, reported: r.digest, source: r.source });
  }
  return [...found.values()].sort((x, y) => (x.tool < y.tool ? -1 : x.tool > y.tool ? 1 : 0));
}

const text = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

/**
 * The tool definitions the server received for a task, in receive order: `tool.definition_changed` events (by the
 * server's sequence), then the latest verified checkpoint's (when it was stored).
 */
export function toolReportsOf(
  events: ReadonlyArray<{ type: string; seq: number; received_at: string; attrs: Record<string, unknown> }>,
  verified: { tool_definitions: Record<string, string> | null; created_at: string } | null,
): ToolDefinitionReport[] {
  const reports: ToolDefinitionReport[] = [];
  for (const e of [...events].filter((x) => x.type === "tool.definition_changed").sort((a, b) => a.seq - b.seq)) {
    const tool = text(e.attrs.tool) ?? text(e.attrs.name);
    const digest = text(e.attrs.definition_digest) ?? text(e.attrs.digest);
    if (tool && digest) reports.push({ tool, digest, source: "event", received_at: e.received_at });
  }
  for (const [tool, digest] of Object.entries(verified?.tool_definitions ?? {})) {
    reports.push({ tool, digest, source: "checkpoint", received_at: verified!.created_at });
  }
  return reports;
}
