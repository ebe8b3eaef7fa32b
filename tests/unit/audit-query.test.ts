/**
 * The one parse of an audit query (lib/domain/audit/read.ts `parseAuditQuery`; decision 0048), shared by the Audit page
 * and `GET /api/v1/audit` and its export: what it accepts, and that each refusal is a 400 naming the parameter.
 */
import { describe, expect, it } from "vitest";
import { EARLIER_ACTION_NAMES, AUDIT_ACTIONS } from "@/lib/domain/audit/actions";
import { auditFilterParams, parseAuditQuery } from "@/lib/domain/audit/read";
import { DomainError } from "@/lib/domain/errors";

const refusal = (input: URLSearchParams | Record<string, string | string[] | undefined>, paging = true) => {
  try {
    parseAuditQuery(input, { paging });
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("bad_request");
    return (err as DomainError).message;
  }
  throw new Error("expected a refusal");
};

describe("parseAuditQuery", () => {
  it("reads every filter and the page; empty values mean any", () => {
    const q = parseAuditQuery(
      new URLSearchParams(
        "actor=a@b.test&action=task.checkpointed&from=2026-01-01&to=2026-01-31T23:00:00Z&task=t-1&target=&before=40&limit=10",
      ),
    );
    expect(q).toEqual({
      filters: {
        actor: "a@b.test",
        action: "task.checkpointed",
        from: "2026-01-01",
        to: "2026-01-31T23:00:00Z",
        task: "t-1",
      },
      before: 40,
      limit: 10,
    });
    expect(parseAuditQuery({})).toEqual({ filters: {}, limit: 50 });
    expect(auditFilterParams(q.filters).toString()).toBe(
      "actor=a%40b.test&action=task.checkpointed&from=2026-01-01&to=2026-01-31T23%3A00%3A00Z&task=t-1",
    );
  });

  it("reads an earlier action name (decision 0023) as its current one", () => {
    expect(parseAuditQuery({ action: "task.checkpoint" }).filters.action).toBe("task.checkpointed");
    for (const [now, earlier] of Object.entries(EARLIER_ACTION_NAMES)) {
      expect(AUDIT_ACTIONS).toContain(now);
      for (const e of earlier ?? []) expect(AUDIT_ACTIONS).not.toContain(e);
    }
  });

  it("refuses bad input naming the parameter", () => {
    expect(refusal({ action: "task.exploded" })).toMatch(/^action /);
    expect(refusal({ from: "2026-02-30" })).toMatch(/^from must be an ISO 8601 date/);
    expect(refusal({ to: "2026-01-01T25:00:00Z" })).toMatch(/^to /);
    expect(refusal({ to: "2026-01-01T10:00:00" })).toMatch(/^to /);
    expect(refusal({ from: "2026-01-02", to: "2026-01-01" })).toBe("from must not be after to.");
    expect(refusal({ acton: "x" })).toMatch(/^acton is not an audit filter/);
    expect(refusal(new URLSearchParams("task=a&task=b"))).toMatch(/^task is given 2 times/);
    expect(refusal({ limit: "0" })).toMatch(/^limit /);
    expect(refusal({ limit: "500" })).toMatch(/^limit /);
    expect(refusal({ before: "-1" })).toMatch(/^before /);
    expect(refusal({ limit: "5" }, false)).toMatch(/^limit is not an audit filter/);
    expect(refusal({ actor: "x".repeat(321) })).toMatch(/^actor must be at most 320/);
  });

  it("takes a date-time with any zone and the same day as both bounds", () => {
    expect(parseAuditQuery({ from: "2026-01-01T10:00+02:00", to: "2026-01-01" }).filters.from).toBe(
      "2026-01-01T10:00+02:00",
    );
    expect(parseAuditQuery({ from: "2026-01-01", to: "2026-01-01" }).filters.to).toBe("2026-01-01");
  });
});
