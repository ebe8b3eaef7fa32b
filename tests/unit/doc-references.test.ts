/**
 * References in code and docs point at what the repository holds (docs/decisions/README.md: what holds today is in
 * docs/). Every .ts, .tsx, .mjs and .md file (outside node_modules, build output and test reports) is read, and:
 * - every `docs/….md` path exists, and each `#anchor` after it (`docs/concepts.md#intent, #receipt`) is a heading
 *   there; so does every relative Markdown link (`[0012](0012-approval-binding-and-freshness.md)`, `(#tool-calls)`);
 * - every `decision NNNN` names a record in docs/decisions/, every `migration NNNN` a file in db/migrations/, and a
 *   record is cited by number or by its full file name, never as a bare `docs/decisions/NNNN`;
 * - every repository path (`lib/…/x.ts`, `db/migrations/…sql`, `tests/…`) exists, placeholders named `x` aside;
 * - no file cites notes kept outside the repository: a design notes file, or the shared folder beside the checkout,
 *   except the fixture paths (`shared/fixtures/…`) that tests read.
 * The checker is run on the repository (no problem expected) and on made-up files, so it is seen to fail.
 * Also: docs/decisions/README.md indexes every record under its title, with the status its `Status:` line gives.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "../..");
/** Directories never scanned: dependencies, build output, test reports and runtime data (dot-directories too). */
const SKIPPED_DIRS = new Set([
  "node_modules",
  "test-results",
  "playwright-report",
  "blob-report",
  "coverage",
  "out",
  "bench-results",
  "e2e/artifacts",
]);
const SCANNED = /\.(ts|tsx|mjs|md)$/;
/** This file: its made-up references are checked below, not as the repository's. */
const THIS_FILE = "tests/unit/doc-references.test.ts";
/** Built from parts so that this file does not cite what it forbids. */
const DESIGN_NOTES = new RegExp(["DESIGN", "md"].join("\\."), "g");
const SHARED_FOLDER = /(?:\.\.\/|\/work\/)shared\b(\/fixtures\/)?/g;

type SourceFile = { file: string; text: string };
type Repo = {
  /** Whether a path relative to the repository's root exists. */
  exists(rel: string): boolean;
  /** The heading anchors of a Markdown file relative to the root, or null when it does not exist. */
  anchors(rel: string): Set<string> | null;
  /** The file names in a directory relative to the root (empty when it does not exist). */
  list(rel: string): string[];
};

function repoFiles(dir = ""): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!entry.name.startsWith(".") && !SKIPPED_DIRS.has(entry.name) && !SKIPPED_DIRS.has(rel))
        out.push(...repoFiles(rel));
    } else if (SCANNED.test(entry.name)) out.push(rel);
  }
  return out;
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor of a Markdown text (repeated headings get `-1`, `-2`, …), outside code fences. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;
const isTest = (file: string) => file.startsWith("tests/") || file.startsWith("e2e/");
/** Placeholder paths in examples (`lib/domain/tasks/x.ts`, `components/maps/X.tsx`, `tests/unit/x.test.ts`). */
const isPlaceholder = (rel: string) => /^x\./i.test(path.posix.basename(rel));

function checkAnchors(
  problems: string[],
  where: string,
  target: string,
  anchors: string[],
  repo: Repo,
  ref: string,
): void {
  if (!anchors.length || !target.endsWith(".md")) return;
  const known = repo.anchors(target);
  if (!known) return;
  for (const a of anchors) if (!known.has(a)) problems.push(`${where}: ${ref}: ${target} has no heading #${a}`);
}

/** Every reference in `files` that does not hold, as `file:line: what is wrong`. */
function referenceProblems(files: SourceFile[], repo: Repo): string[] {
  const problems: string[] = [];
  const records = new Set(repo.list("docs/decisions").map((f) => /^(\d{4})-.*\.md$/.exec(f)?.[1]));
  const migrations = new Set(repo.list("db/migrations").map((f) => /^(\d{4})_.*\.sql$/.exec(f)?.[1]));
  for (const { file, text } of files) {
    const at = (index: number) => `${file}:${lineOf(text, index)}`;

    for (const m of text.matchAll(DESIGN_NOTES))
      problems.push(`${at(m.index)}: cites ${m[0]}, notes outside the repository; cite docs/ or a decision record`);
    for (const m of text.matchAll(SHARED_FOLDER))
      if (!(isTest(file) && m[1])) problems.push(`${at(m.index)}: cites ${m[0]}, a folder outside the repository`);

    // docs/….md, with the anchors that follow it: `docs/concepts.md#events, #side-effects` (also across a line break).
    const docPaths = /(?<![\w./-])(docs\/[\w./-]*?\.md)((?:#[\w-]+)(?:,\s*(?:\*\s*|\/\/\s*)?#[\w-]+)*)?/g;
    for (const m of text.matchAll(docPaths)) {
      const target = m[1]!;
      if (!repo.exists(target)) {
        problems.push(`${at(m.index)}: ${target} does not exist`);
        continue;
      }
      const anchors = [...(m[2] ?? "").matchAll(/#([\w-]+)/g)].map((a) => a[1]!);
      checkAnchors(problems, at(m.index), target, anchors, repo, m[0]);
    }
    for (const m of text.matchAll(/(?<![\w./-])docs\/decisions\/(\d{4})(?![\w-])/g))
      problems.push(
        `${at(m.index)}: ${m[0]}: name the record by its file (docs/decisions/${m[1]}-….md) or "decision ${m[1]}"`,
      );

    for (const m of text.matchAll(/\bdecisions?\s+(\d{4}(?:(?:,\s*|\s+and\s+|,\s+and\s+)\d{4})*)/gi))
      for (const n of m[1]!.match(/\d{4}/g)!)
        if (!records.has(n)) problems.push(`${at(m.index)}: ${m[0]}: no decision record ${n} in docs/decisions/`);
    for (const m of text.matchAll(/\bmigrations?\s+(\d{4})\b/gi))
      if (!migrations.has(m[1]!)) problems.push(`${at(m.index)}: ${m[0]}: no migration ${m[1]} in db/migrations/`);

    const repoPaths =
      /(?<![\w./@-])((?:app|lib|components|db|scripts|tests|e2e)\/[\w\-./[\]()]+?\.(?:tsx?|mjs|sql|md))(?!\w)/g;
    for (const m of text.matchAll(repoPaths))
      if (!isPlaceholder(m[1]!) && !repo.exists(m[1]!)) problems.push(`${at(m.index)}: ${m[1]} does not exist`);

    if (file.endsWith(".md")) {
      // Links outside code: code spans and fences are blanked (same length, so line numbers hold).
      const prose = text.replace(/```[\s\S]*?```|`[^`\n]*`/g, (code) => code.replace(/[^\n]/g, " "));
      for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1]!;
        if (/^[a-z][\w+.-]*:/i.test(link) || link.startsWith("/")) continue;
        const [target, anchor] = link.split("#") as [string, string | undefined];
        const rel = target ? path.posix.normalize(path.posix.join(path.posix.dirname(file), target)) : file;
        if (!repo.exists(rel)) problems.push(`${at(m.index)}: link ${link}: ${rel} does not exist`);
        else checkAnchors(problems, at(m.index), rel, anchor ? [anchor] : [], repo, `link ${link}`);
      }
    }
  }
  return problems;
}

/** The repository on disk. */
function diskRepo(): Repo {
  const cache = new Map<string, Set<string> | null>();
  return {
    exists: (rel) => fs.existsSync(path.join(ROOT, rel)),
    anchors(rel) {
      if (!cache.has(rel)) {
        const file = path.join(ROOT, rel);
        cache.set(rel, fs.existsSync(file) ? anchorsOf(fs.readFileSync(file, "utf8")) : null);
      }
      return cache.get(rel)!;
    },
    list: (rel) => (fs.existsSync(path.join(ROOT, rel)) ? fs.readdirSync(path.join(ROOT, rel)) : []),
  };
}

/** A made-up repository: `files` by path (Markdown ones give their headings). */
function fakeRepo(files: Record<string, string>): Repo {
  const dirs = new Set(
    Object.keys(files).flatMap((f) => f.split("/").map((_, i, parts) => parts.slice(0, i).join("/"))),
  );
  return {
    exists: (rel) => rel in files || dirs.has(rel),
    anchors: (rel) => (rel in files ? anchorsOf(files[rel]!) : null),
    list: (rel) =>
      Object.keys(files)
        .filter((f) => path.posix.dirname(f) === rel)
        .map((f) => path.posix.basename(f)),
  };
}

describe("references in code and docs", () => {
  it("all hold in the repository", () => {
    const files = repoFiles()
      .filter((file) => file !== THIS_FILE)
      .map((file) => ({ file, text: fs.readFileSync(path.join(ROOT, file), "utf8") }));
    expect(files.length).toBeGreaterThan(300);
    expect(files.map((f) => f.file)).toContain("docs/concepts.md");
    expect(referenceProblems(files, diskRepo())).toEqual([]);
  });

  it("makes GitHub's heading anchors", () => {
    expect(slug("Policy versions and lint")).toBe("policy-versions-and-lint");
    expect(slug("Tenants, people and roles")).toBe("tenants-people-and-roles");
    expect(slug("2026-11-30: ingest through `COPY` staging (decision 0021) — loaded")).toBe(
      "2026-11-30-ingest-through-copy-staging-decision-0021--loaded",
    );
    expect([...anchorsOf("# A\n## Step\n```\n# not a heading\n```\n## Step\n")]).toEqual(["a", "step", "step-1"]);
  });

  const repo = fakeRepo({
    "docs/concepts.md": "# Concepts\n## Resume gate\n## Intent\n",
    "docs/decisions/0001-first.md": "# 0001 — First\n",
    "docs/decisions/README.md": "# Decision records\n",
    "db/migrations/0003_x.sql": "",
    "lib/domain/gate/evaluate.ts": "",
  });
  const check = (file: string, text: string) => referenceProblems([{ file, text }], repo);

  it("accepts references that hold", () => {
    const ok = [
      "/** The gate (docs/concepts.md#resume-gate, #intent; decision 0001; migration 0003). */",
      "// lib/domain/gate/evaluate.ts, lib/domain/tasks/x.ts (a placeholder), docs/decisions/0001-first.md",
    ].join("\n");
    expect(check("lib/a.ts", ok)).toEqual([]);
    expect(
      check("tests/unit/a.test.ts", 'const dir = "/work/shared/fixtures/real"; // ../shared/fixtures/real'),
    ).toEqual([]);
    expect(check("docs/decisions/README.md", "[0001](0001-first.md) [gate](../concepts.md#resume-gate)")).toEqual([]);
  });

  it("flags each kind of reference that does not hold", () => {
    const notes = ["DESIGN", "md"].join(".");
    expect(check("lib/a.ts", `/** Source: ${notes} "Resume gate". */`)).toEqual([
      `lib/a.ts:1: cites ${notes}, notes outside the repository; cite docs/ or a decision record`,
    ]);
    expect(check("tests/unit/a.test.ts", `// ${notes}`)).toHaveLength(1);
    expect(check("lib/a.ts", "// ../shared/fixtures/real")).toEqual([
      "lib/a.ts:1: cites ../shared/fixtures/, a folder outside the repository",
    ]);
    expect(check("tests/unit/a.test.ts", "// /work/shared/CONVENTIONS.md")).toHaveLength(1);
    expect(check("lib/a.ts", "/**\n * See docs/nope.md.\n */")).toEqual(["lib/a.ts:2: docs/nope.md does not exist"]);
    expect(check("lib/a.ts", "// docs/decisions/0002-second.md")).toEqual([
      "lib/a.ts:1: docs/decisions/0002-second.md does not exist",
    ]);
    expect(check("lib/a.ts", "// (docs/concepts.md#resume-gate,\n// #no-such-heading)")).toEqual([
      "lib/a.ts:1: docs/concepts.md#resume-gate,\n// #no-such-heading: docs/concepts.md has no heading #no-such-heading",
    ]);
    expect(check("lib/a.ts", "// decisions 0001 and 0099")).toEqual([
      "lib/a.ts:1: decisions 0001 and 0099: no decision record 0099 in docs/decisions/",
    ]);
    expect(check("lib/a.ts", "// (docs/decisions/0001)")).toHaveLength(1);
    expect(check("lib/a.ts", "// migration 0011")).toEqual([
      "lib/a.ts:1: migration 0011: no migration 0011 in db/migrations/",
    ]);
    expect(check("lib/a.ts", "// in lib/domain/gate/evaluat.ts")).toEqual([
      "lib/a.ts:1: lib/domain/gate/evaluat.ts does not exist",
    ]);
    expect(check("docs/decisions/README.md", "[0002](0002-second.md) and [gate](../concepts.md#gate)")).toEqual([
      "docs/decisions/README.md:1: link 0002-second.md: docs/decisions/0002-second.md does not exist",
      "docs/decisions/README.md:1: link ../concepts.md#gate: docs/concepts.md has no heading #gate",
    ]);
  });
});

/** What the index says of a record, derived from the record's `Status:` paragraph. */
function indexStatus(status: string): string {
  const plain = status.replace(/\([^()]*\)/g, "");
  const superseded = /superseded by (\d{4})/.exec(plain);
  if (superseded) return `superseded by ${superseded[1]}`;
  const amended = /amended by ([^;.]*)/.exec(plain);
  return amended ? `amended by ${amended[1]!.match(/\d{4}/g)!.join(", ")}` : "accepted";
}

describe("the decision index", () => {
  const dir = path.join(ROOT, "docs/decisions");
  const records = fs.readdirSync(dir).filter((f) => /^\d{4}-.*\.md$/.test(f));
  const rows = new Map(
    [
      ...fs
        .readFileSync(path.join(dir, "README.md"), "utf8")
        .matchAll(/^\| \[(\d{4})\]\(([^)]+)\) \| (.+?) \| (.+?) \|$/gm),
    ].map((m) => [m[1]!, { file: m[2]!, title: m[3]!, status: m[4]! }]),
  );

  it("lists every record once, and only records that exist", () => {
    expect(records.length).toBeGreaterThan(20);
    expect([...rows.keys()].sort()).toEqual(records.map((f) => f.slice(0, 4)).sort());
  });

  it.each(records)("%s: the index links it under its title, with the status of its Status: line", (record) => {
    const text = fs.readFileSync(path.join(dir, record), "utf8");
    const number = record.slice(0, 4);
    const title = new RegExp(`^# ${number} — (.+)$`, "m").exec(text)?.[1];
    const status = /^Status: ([\s\S]+?)\n\s*\n/m.exec(text)?.[1];
    expect(title, "a first heading `# NNNN — title`").toBeTruthy();
    expect(status, "a `Status:` line").toBeTruthy();
    expect(status).toMatch(/^(accepted|superseded by \d{4})\b/);
    expect(rows.get(number)).toEqual({ file: record, title, status: indexStatus(status!) });
  });

  it("reads a Status line as the index shows it", () => {
    expect(indexStatus("accepted.")).toBe("accepted");
    expect(indexStatus("accepted; amends 0003 (moves made by events are audited too).")).toBe("accepted");
    expect(indexStatus("accepted; amended by 0014 (in the deciding transaction; 0012 unchanged) and 0020 (x).")).toBe(
      "amended by 0014, 0020",
    );
    expect(indexStatus("superseded by 0030 (one module).")).toBe("superseded by 0030");
  });
});
