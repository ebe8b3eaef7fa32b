/**
 * The build-freshness check (scripts/lib/build-freshness.ts, and the same list in scripts/verify.sh) counts the
 * static files of public/ as build sources: a changed robots.txt makes the build stale.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUILD_SOURCES, newestSourceMtime } from "@/scripts/lib/build-freshness";

describe("build freshness", () => {
  it("lists public/ among the build sources, here and in scripts/verify.sh", () => {
    expect(BUILD_SOURCES).toContain("public");
    expect(fs.readFileSync(path.join(process.cwd(), "scripts", "verify.sh"), "utf8")).toMatch(
      /find app components lib db public /,
    );
    expect(fs.existsSync(path.join(process.cwd(), "public", "robots.txt"))).toBe(true);
  });

  it("sees a file changed under public/", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "freshness-"));
    try {
      fs.mkdirSync(path.join(root, "app"));
      fs.writeFileSync(path.join(root, "app", "page.tsx"), "x");
      fs.utimesSync(path.join(root, "app", "page.tsx"), new Date(1_000_000), new Date(1_000_000));
      fs.mkdirSync(path.join(root, "public"));
      fs.writeFileSync(path.join(root, "public", "robots.txt"), "User-agent: *");
      fs.utimesSync(path.join(root, "public", "robots.txt"), new Date(2_000_000), new Date(2_000_000));
      expect(newestSourceMtime(root)).toBe(2_000_000);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
