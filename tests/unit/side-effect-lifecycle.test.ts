/**
 * The side-effect lifecycle (lib/domain/side-effects/lifecycle, decision 0024): the transition table's edges and
 * audit rule, the guards its statements derive from it, and that no file outside the module writes `side_effects`.
 */
import fs from "node:fs";
import path from "node:path";
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { SIDE_EFFECT_STATUSES } from "@/db/schema/enums";
import { statusGuard, statusLiteral } from "@/lib/domain/side-effects/lifecycle/sql";
import {
  ABSENT,
  auditOf,
  reachableFrom,
  TRANSITIONS,
  type Cause,
  type TransitionName,
  type TransitionSpec,
} from "@/lib/domain/side-effects/lifecycle/transitions";

const specs = Object.entries(TRANSITIONS) as Array<[TransitionName, TransitionSpec]>;

describe("the transition table", () => {
  it("allows exactly these moves (a new one is added here on purpose, with docs/architecture.md#side-effects-and-the-gate)", () => {
    const edges = specs.flatMap(([t, s]) => s.from.flatMap((f) => s.to.map((to) => `${f} -> ${to} (${t})`))).sort();
    expect(edges).toEqual(
      [
        "absent -> in_flight (intent_go)",
        "not_started -> in_flight (intent_go)",
        "approved -> in_flight (intent_go)",
        "failed -> in_flight (intent_go)",
        "absent -> completed (intent_replays_pending_receipt)",
        "not_started -> completed (intent_replays_pending_receipt)",
        "approved -> completed (intent_replays_pending_receipt)",
        "failed -> completed (intent_replays_pending_receipt)",
        "in_flight -> completed (receipt_completes)",
        "in_flight -> not_started (receipt_not_applied)",
        "in_flight -> approved (receipt_not_applied)",
        "absent -> in_flight (reported_intent)",
        "absent -> completed (reported_intent)",
        "not_started -> in_flight (reported_intent)",
        "not_started -> completed (reported_intent)",
        "approved -> in_flight (reported_intent)",
        "approved -> completed (reported_intent)",
        "failed -> in_flight (reported_intent)",
        "failed -> completed (reported_intent)",
        "absent -> unknown (reported_write_refused)",
        "not_started -> unknown (reported_write_refused)",
        "approved -> unknown (reported_write_refused)",
        "awaiting_approval -> unknown (reported_write_refused)",
        "failed -> unknown (reported_write_refused)",
        "in_flight -> unknown (attempt_ended)",
        "not_started -> unknown (orphan_call_declared)",
        "approved -> unknown (orphan_call_declared)",
        "awaiting_approval -> unknown (orphan_call_declared)",
        "failed -> unknown (orphan_call_declared)",
        "absent -> unknown (orphan_call_created)",
        "in_flight -> unknown (lease_expired)",
        "unknown -> completed (reconciled_completed)",
        "unknown -> not_started (reconciled_not_applied)",
        "unknown -> approved (reconciled_not_applied)",
        "absent -> not_started (declared)",
        "absent -> awaiting_approval (declared)",
        "absent -> failed (declared)",
        "absent -> completed (declared)",
        "absent -> unknown (declared)",
        "absent -> awaiting_approval (approval_requested)",
        "not_started -> awaiting_approval (approval_requested)",
        "awaiting_approval -> approved (approval_granted)",
        "not_started -> approved (approval_granted)",
        "awaiting_approval -> awaiting_approval (approval_rejected)",
        "approved -> awaiting_approval (approval_rejected)",
        "not_started -> awaiting_approval (approval_rejected)",
      ].sort(),
    );
  });

  it("never leaves completed, and leaves unknown only by a person's reconcile", () => {
    expect(reachableFrom("completed")).toEqual([]);
    const leavingUnknown = specs.filter(([, s]) => s.from.includes("unknown"));
    expect(leavingUnknown.map(([t]) => t).sort()).toEqual(["reconciled_completed", "reconciled_not_applied"]);
    for (const [, s] of leavingUnknown) expect(s.audit).toEqual({ request: "side_effect.reconciled" });
  });

  it("audits every move made by an event or by the clock itself", () => {
    for (const [t, s] of specs) {
      for (const cause of Object.keys(s.audit) as Cause[]) {
        if (cause === "event" || cause === "clock")
          expect([t, cause, auditOf(t, cause as never)]).toEqual([t, cause, "own"]);
      }
    }
    expect(TRANSITIONS.lease_expired.audit).toEqual({ clock: "own" });
    expect(specs.filter(([, s]) => "clock" in s.audit).map(([t]) => t)).toEqual(["lease_expired"]);
  });

  it("names real statuses, and every status is reachable from a new effect", () => {
    const known = new Set<string>([ABSENT, ...SIDE_EFFECT_STATUSES]);
    for (const [, s] of specs) for (const st of [...s.from, ...s.to]) expect(known).toContain(st);
    const seen = new Set<string>([ABSENT]);
    for (let grew = true; grew;) {
      grew = false;
      for (const st of [...seen])
        for (const to of reachableFrom(st as never))
          if (!seen.has(to)) {
            seen.add(to);
            grew = true;
          }
    }
    expect([...seen].sort()).toEqual([ABSENT, ...SIDE_EFFECT_STATUSES].sort());
  });
});

describe("the statements' guards come from the table", () => {
  const dialect = new PgDialect();
  const text = (q: SQL) => dialect.sqlToQuery(q).sql;

  it("guards with the statuses a transition may leave, as literals", () => {
    expect(text(statusGuard("lease_expired"))).toBe("status = 'in_flight'");
    expect(text(statusGuard("reported_write_refused", { column: "s.status" }))).toBe(
      "s.status in ('not_started', 'approved', 'awaiting_approval', 'failed')",
    );
    expect(text(statusGuard("intent_go", { observed: "approved" }))).toBe("status = 'approved'");
  });

  it("refuses a move the table does not allow, when a caller gets past the types", () => {
    expect(() => statusGuard("intent_go", { observed: "unknown" as never })).toThrow("intent_go cannot leave unknown");
    expect(() => statusLiteral("lease_expired", "completed" as never)).toThrow("lease_expired cannot reach completed");
    expect(() => statusGuard("orphan_call_created")).toThrow("leaves no existing row");
  });
});

/** A write to `side_effects` in source text: SQL (any case and spacing) or a Drizzle builder call. */
const WRITES_SIDE_EFFECTS =
  /\b(?:update|insert\s+into|merge\s+into)\s+(?:public\.)?"?side_effects"?(?![A-Za-z0-9_])|\.(?:update|insert)\(\s*sideEffects\s*\)/i;

const ROOT = path.resolve(__dirname, "../..");
const LIFECYCLE = path.join("lib", "domain", "side-effects", "lifecycle");

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (rel === path.join("db", "migrations") || entry.name === "node_modules") continue;
      out.push(...sourceFiles(rel));
    } else if (/\.(ts|tsx|mjs|js)$/.test(entry.name)) out.push(rel);
  }
  return out;
}

describe("one module writes side_effects", () => {
  it("recognizes a write however it is spelled", () => {
    for (const text of [
      "sql`update side_effects set status = 'unknown'`",
      "sql`UPDATE  side_effects s set`",
      "sql`insert into\n side_effects (tenant_id`",
      "db.update(sideEffects).set({})",
    ])
      expect(text).toMatch(WRITES_SIDE_EFFECTS);
    for (const text of ["select * from side_effects", "update side_effects_archive", "update tasks set side_effects"])
      expect(text).not.toMatch(WRITES_SIDE_EFFECTS);
  });

  it("finds no write to side_effects outside lib/domain/side-effects/lifecycle", () => {
    const files = ["app", "components", "lib", "db", "scripts"].flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(100);
    const writers = files.filter(
      (f) =>
        !f.startsWith(LIFECYCLE + path.sep) && WRITES_SIDE_EFFECTS.test(fs.readFileSync(path.join(ROOT, f), "utf8")),
    );
    expect(writers).toEqual([]);
    expect(
      sourceFiles(LIFECYCLE).filter((f) => WRITES_SIDE_EFFECTS.test(fs.readFileSync(path.join(ROOT, f), "utf8"))),
    ).not.toEqual([]);
  });
});
