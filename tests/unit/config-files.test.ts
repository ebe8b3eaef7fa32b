/**
 * lib/config/files.ts: files a kill must never tear (signing key, session secret, demo secrets) are written whole
 * under their real name or not at all, and no temporary file is left behind.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import { createFileOnce, writeFileAtomic } from "@/lib/config/files";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-files-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test("createFileOnce creates a missing file (mode 0600) and leaves an existing one as it is", () => {
  const file = path.join(dir, "nested", "secret");
  expect(createFileOnce(file, "first")).toBe(true);
  expect(createFileOnce(file, "second")).toBe(false);
  expect(fs.readFileSync(file, "utf8")).toBe("first");
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(fs.readdirSync(path.dirname(file))).toEqual(["secret"]);
});

test("writeFileAtomic replaces the whole file and leaves no temporary file", () => {
  const file = path.join(dir, "demo-secrets.json");
  writeFileAtomic(file, JSON.stringify({ a: 1 }));
  writeFileAtomic(file, JSON.stringify({ a: 2, b: "x".repeat(10_000) }));
  expect(JSON.parse(fs.readFileSync(file, "utf8"))).toMatchObject({ a: 2 });
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
});
