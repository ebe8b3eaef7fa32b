import { describe, expect, it } from "vitest";
import { safeLocalPath } from "@/lib/domain/web/safe-path";

describe("safeLocalPath (redirect after sign-in)", () => {
  it.each(["/tasks", "/tasks/case-918?tab=side-effects&effect=update_record", "/", "/audit#top"])(
    "keeps the local path %s",
    (p) => {
      expect(safeLocalPath(p)).toBe(p);
    },
  );
  it.each([
    "//evil.example/x",
    "/\\evil.example",
    "/%5Cevil.example",
    "https://evil.example",
    "evil.example",
    "javascript:alert(1)",
    "/\tevil",
    "",
    null,
    42,
  ])("refuses %j", (p) => {
    const out = safeLocalPath(p);
    expect(out === "/tasks" || new URL(out, "http://same.invalid").host === "same.invalid").toBe(true);
    expect(out.startsWith("//")).toBe(false);
  });
  it("sends /%5Cevil.example to a path on this site, never to another host", () => {
    expect(safeLocalPath("/%5Cevil.example")).toBe("/%5Cevil.example");
  });
});
