import { policyVersionParam } from "@/lib/domain/policies/version-param";
import { describe, expect, it } from "vitest";
import { policyVersionFilter, policyVersionName, policyVersionNumber } from "@/lib/domain/policies/version-name";

describe("one name for a policy version (issue 24)", () => {
  it("reads 3, v3 and policy-v3 as the same number; other strings as none", () => {
    for (const v of ["3", "v3", "V3", "policy-v3", "POLICY-V3", " 3 ", 3]) expect(policyVersionNumber(v)).toBe(3);
    for (const v of [null, undefined, "", "v", "0", "v0", "1.5", "-1", "policy-3x", "canary", 0, 1.5])
      expect(policyVersionNumber(v)).toBeNull();
  });

  it("shows v3 for every spelling, a runtime string as it is, and a dash for none", () => {
    for (const v of ["3", "v3", "policy-v3", 3]) expect(policyVersionName(v)).toBe("v3");
    expect(policyVersionName("canary-build")).toBe("canary-build");
    expect(policyVersionName(null)).toBe("—");
    expect(policyVersionName("")).toBe("—");
  });

  it("parses the task filter: numbers in any spelling, other plain strings as they are, malformed as a 400", () => {
    expect(policyVersionFilter(null)).toBeUndefined();
    expect(policyVersionFilter("  ")).toBeUndefined();
    for (const v of ["1", "v1", "policy-v1", " V1 "]) expect(policyVersionFilter(v)).toEqual({ number: 1 });
    expect(policyVersionFilter("canary-build")).toEqual({ text: "canary-build" });
    for (const bad of ["v", "v0", "0", "1.5", "-1", "policy-v", "a b", "\u0000", "x".repeat(101)]) {
      let code: unknown;
      try {
        policyVersionFilter(bad);
      } catch (e) {
        code = (e as { code?: string; message?: string }).code;
        expect((e as Error).message).toContain("policy_version");
      }
      expect(code, bad).toBe("bad_request");
    }
  });
});

describe("a policy version in a URL takes the names the pages show (policyVersionParam)", () => {
  it("reads 3, v3 and policy-v3 alike", () => {
    for (const raw of ["3", "v3", "V3", "policy-v3"]) expect(policyVersionParam(raw), raw).toBe(3);
  });

  it("refuses anything that names no positive version with bad_request", () => {
    for (const raw of ["0", "v0", "-1", "1.5", "abc", "v", "", "3 4", "policy-3x"]) {
      expect(() => policyVersionParam(raw), raw).toThrow(expect.objectContaining({ code: "bad_request" }));
    }
  });
});
