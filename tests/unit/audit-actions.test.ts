/**
 * The audit action vocabulary (lib/domain/audit/actions.ts) follows its one naming rule: `<resource>.<past
 * participle>`, two segments of lower-case snake_case, the last word a regular past participle (`-ed`).
 */
import { describe, expect, it } from "vitest";
import { AUDIT_ACTIONS } from "@/lib/domain/audit/actions";

const RULE = /^[a-z]+(?:_[a-z]+)*\.(?:[a-z]+_)*[a-z]+ed$/;

describe("audit actions", () => {
  it.each(AUDIT_ACTIONS)("%s is <resource>.<past participle>", (action) => {
    expect(action).toMatch(RULE);
  });

  it("names each action once", () => {
    expect(new Set(AUDIT_ACTIONS).size).toBe(AUDIT_ACTIONS.length);
  });

  it("refuses the shapes the rule excludes", () => {
    for (const name of ["map.layer.update", "map.layer_updated.x", "policy.store", "member.role_change", "Map.created"])
      expect(name).not.toMatch(RULE);
  });
});
