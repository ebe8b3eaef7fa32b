/**
 * Boundary limits (lib/domain/limits.ts, decision 0028): every value that reaches an index or a key is held to its
 * limit where it enters. Per event, a value past its limit is `rejected` naming the field path and the rest of the
 * batch is stored; the README's limits table lists every limit. The database side — every indexed text expression has
 * a limit — is tests/integration/index-limits.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fastPrepare, prepareBatch, prepareFully } from "@/lib/domain/events/ingest";
import { ATTR_RULES } from "@/lib/domain/events/schema";
import { LIMITS } from "@/lib/domain/limits";
import { credentialKindsInName, nameProblem, plainName, redactName } from "@/lib/domain/names";

const base = {
  task_id: "task-limits",
  plane: "tools",
  type: "tool.called",
  occurred_at: "2026-11-29T10:00:00Z",
  attempt: 1,
} as const;
let n = 0;
const event = (over: Record<string, unknown>) => ({ ...base, id: `ev-${(n += 1)}`, ...over });
/** The per-event results of one batch. */
const results = (events: unknown[]) => prepareBatch({ events }).results;

/** A type the rule of `field` applies to (with its plane). */
function typeFor(field: string): { type: string; plane: string } {
  const rule = ATTR_RULES.find((r) => r.field === field)!;
  const type = rule.types ? [...rule.types][0]! : "x.custom";
  const plane = type.startsWith("snapshot.") ? "environment" : type.startsWith("x.") ? "session" : "tools";
  return { type, plane };
}

describe("the README lists every boundary limit", () => {
  it("has a row per limit, named as in lib/domain/limits.ts, with its number", () => {
    const readme = fs.readFileSync(path.resolve(__dirname, "../../README.md"), "utf8");
    const section = readme.slice(
      readme.indexOf("\n## Limits\n"),
      readme.indexOf("\n## ", readme.indexOf("## Limits") + 5),
    );
    const rows = new Map(
      section
        .split("\n")
        .filter((l) => l.startsWith("| "))
        .map((l) => l.split(" | ").map((c) => c.replace(/^\| |\s*\|$/g, "").trim()))
        .map(([what, limit]) => [what!, limit ?? ""]),
    );
    for (const [key, limit] of Object.entries(LIMITS)) {
      const row = rows.get(limit.name);
      expect(row, `README limits table: no row "${limit.name}" (${key})`).toBeDefined();
      expect(row, `README limits table: "${limit.name}"`).toContain(limit.max.toLocaleString("en-US"));
    }
  });
});

describe("per event, a value past its limit is rejected naming its path; the rest of the batch is stored", () => {
  it("a 6,000-character call id, a 2,700-character host and credential reference", () => {
    const r = results([
      event({ attrs: { tool: "update_record", call_id: "c".repeat(6000), mutation: true } }),
      event({ plane: "tools", type: "egress.allowed", attrs: { host: "h".repeat(2700) } }),
      event({ plane: "vault", type: "credential.used", attrs: { credential_ref: "r".repeat(2700) } }),
      event({ attrs: { tool: "update_record", call_id: "c-1", mutation: true } }),
    ]);
    expect(r.map((x) => x.status)).toEqual(["rejected", "rejected", "rejected", "stored"]);
    expect(r.map((x) => x.error?.path)).toEqual(["attrs.call_id", "attrs.host", "attrs.credential_ref", undefined]);
    expect(r[0]!.error!.message).toMatch(/^attrs\.call_id is too long \(6000 characters\); at most 200/);
    expect(r[1]!.error!.message).toMatch(/^attrs\.host is too long \(2700 characters\); at most 255/);
  });

  it.each(ATTR_RULES.map((r) => [r.field, r.limit.max]))(
    "attrs.%s: %i characters are stored, one more is rejected; null is no value, a number is refused",
    (field, max) => {
      const { type, plane } = typeFor(field);
      const at = (v: unknown) => event({ type, plane, attrs: { [field]: v } });
      const r = results([at("a".repeat(max)), at("a".repeat(max + 1)), at(null), at(42), at("")]);
      expect(r.map((x) => x.status)).toEqual(["stored", "rejected", "stored", "rejected", "rejected"]);
      for (const x of r.filter((y) => y.status === "rejected")) expect(x.error!.path).toBe(`attrs.${field}`);
    },
  );

  it("host and credential_ref on every type (they are indexed on every event); call_id only on tool events", () => {
    const r = results([
      event({ type: "x.note", plane: "session", attrs: { host: "h".repeat(300) } }),
      event({ type: "phase.changed", plane: "session", attrs: { credential_ref: "r".repeat(201) } }),
      event({ type: "x.note", plane: "session", attrs: { call_id: "c".repeat(300) } }),
    ]);
    expect(r.map((x) => x.status)).toEqual(["rejected", "rejected", "stored"]);
  });

  it("the envelope: id, environment_id, actor past their limits", () => {
    const r = results([
      event({ id: "i".repeat(201) }),
      event({ environment_id: "s".repeat(201) }),
      event({ actor: "a".repeat(201) }),
      event({ type: "x.".padEnd(101, "t"), plane: "session" }),
    ]);
    expect(r.map((x) => [x.status, x.error?.path])).toEqual([
      ["rejected", "id"],
      ["rejected", "environment_id"],
      ["rejected", "actor"],
      ["rejected", "type"],
    ]);
  });

  it("the hot path never takes what the full path rejects", () => {
    for (const e of [
      event({ attrs: { call_id: "c".repeat(201), mutation: true } }),
      event({ plane: "tools", type: "egress.denied", attrs: { host: "h".repeat(256) } }),
      event({ id: "e\u202e1" }),
      event({ id: "evt_AKIAIOSFODNN7EXAMPLE" }),
      event({ environment_id: "sbx_AKIAIOSFODNN7EXAMPLE" }),
      event({ attrs: { tool: "x\u200by" } }),
    ]) {
      expect(fastPrepare(e)).toBeNull();
      expect(prepareFully(e)).not.toEqual(expect.objectContaining({ status: "stored" }));
    }
  });
});

describe("names and ids", () => {
  it("nameProblem: type, length, surrounding whitespace, unsafe characters, credentials; never quotes the value", () => {
    const limit = { name: "x", max: 10 };
    expect(nameProblem("ok-name", limit)).toBeNull();
    expect(nameProblem(7, limit)).toMatch(/must be a string/);
    expect(nameProblem("", limit)).toMatch(/must not be empty/);
    expect(nameProblem("a".repeat(11), limit)).toMatch(/too long \(11 characters\); at most 10/);
    expect(nameProblem(" a", limit)).toMatch(/whitespace/);
    expect(nameProblem("a\u0007b", limit)).toMatch(/U\+0007.*position 2/);
    const secret = nameProblem("AKIAIOSFODNN7EXAMPLE", { name: "x", max: 100 });
    expect(secret).toMatch(/credential value \(aws_access_key_id\)/);
    expect(secret).not.toContain("AKIA");
    expect(nameProblem("AKIAIOSFODNN7EXAMPLE", { name: "x", max: 100 }, { credentials: "allow" })).toBeNull();
  });

  it("a credential joined by `_` counts in a name (it separates words there)", () => {
    expect(credentialKindsInName("evt_AKIAIOSFODNN7EXAMPLE")).toEqual(["aws_access_key_id"]);
    expect(credentialKindsInName("tool_Bearer_abcdefghijklmnop1234")).toEqual(["bearer_token"]);
    expect(credentialKindsInName("update_record_2026_01_01")).toEqual([]);
    expect(credentialKindsInName("token_refresh_job")).toEqual([]);
  });

  it("redactName redacts a label's credentials as written and where `_` joins them", () => {
    expect(redactName("sbx_AKIAIOSFODNN7EXAMPLE")).toEqual({ value: "sbx_[REDACTED]", kinds: ["aws_access_key_id"] });
    const both = redactName(`ghp_${"A1b2C3d4E5".repeat(4)} run_AKIAIOSFODNN7EXAMPLE`);
    expect(both.value).toBe("[REDACTED] run_[REDACTED]");
    expect(both.kinds).toHaveLength(2);
    expect(redactName("sandbox-7")).toEqual({ value: "sandbox-7", kinds: [] });
  });

  it("plainName uses the limit of its kind", () => {
    expect(plainName("tool", LIMITS.toolName).safeParse("t".repeat(200)).success).toBe(true);
    const r = plainName("tool", LIMITS.toolName).safeParse("t".repeat(201));
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toMatch(/^tool is too long \(201 characters\); at most 200/);
  });
});
