/**
 * The OpenAPI document served at /api/v1/openapi.json (lib/server/openapi.ts) names exactly the operations the route
 * files serve: every method a file under app/api exports itself (not the 405 handlers it takes from `otherMethods`) is
 * a documented operation, and every documented operation has a route file exporting that method. Path parameters are
 * written `[taskId]` in the file tree and `{task_id}` in the document.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "@/lib/server/openapi";

const root = path.resolve(import.meta.dirname, "../..");
const API_DIR = path.join(root, "app", "api");
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Route files that are not operations of the API, by their folder under app/api. */
const NOT_DOCUMENTED: Record<string, string> = {
  "[...unknown]": "the 404 answer for any path no route serves",
  "auth/[...nextauth]": "next-auth's own sign-in, sign-out, session and CSRF endpoints",
  "v1/openapi.json": "the document itself",
};

/**
 * The methods a route file serves: `export async function GET`, `export const GET = …` and `export { handler as GET }`.
 * Names destructured from an `otherMethods(…)` call are its 405 answers and do not count.
 */
function servedMethods(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const names: string[] = [];
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && exported(statement) && statement.name) names.push(statement.name.text);
    else if (ts.isVariableStatement(statement) && exported(statement)) {
      for (const d of statement.declarationList.declarations) {
        if (ts.isIdentifier(d.name)) names.push(d.name.text);
        else if (ts.isObjectBindingPattern(d.name)) {
          const from405 =
            d.initializer &&
            ts.isCallExpression(d.initializer) &&
            ts.isIdentifier(d.initializer.expression) &&
            d.initializer.expression.text === "otherMethods";
          if (!from405) for (const e of d.name.elements) if (ts.isIdentifier(e.name)) names.push(e.name.text);
        }
      }
    } else if (
      ts.isExportDeclaration(statement) &&
      statement.exportClause &&
      ts.isNamedExports(statement.exportClause)
    ) {
      for (const e of statement.exportClause.elements) names.push(e.name.text);
    }
  }
  return names.filter((n) => (METHODS as readonly string[]).includes(n));
}

/** `[taskId]` → `{task_id}`. */
const documentedPath = (url: string) =>
  url.replace(/\[(\w+)\]/g, (_, name: string) => `{${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}}`);

/** `METHOD /api/…` (document spelling) for every method the route files serve, without {@link NOT_DOCUMENTED}. */
function routeOperations(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === "route.ts") {
        const folder = path.relative(API_DIR, dir).split(path.sep).join("/");
        if (folder in NOT_DOCUMENTED) continue;
        for (const m of servedMethods(full)) out.push(`${m} ${documentedPath(`/api/${folder}`)}`);
      }
    }
  };
  walk(API_DIR);
  return out.sort();
}

function documentedOperations(): string[] {
  const { paths } = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(paths)
    .flatMap(([p, item]) =>
      Object.keys(item)
        .map((k) => k.toUpperCase())
        .filter((m) => (METHODS as readonly string[]).includes(m))
        .map((m) => `${m} ${p}`),
    )
    .sort();
}

describe("the OpenAPI document and the route files", () => {
  it("leaves out only route files that exist", () => {
    const missing = Object.keys(NOT_DOCUMENTED).filter((f) => !fs.existsSync(path.join(API_DIR, f, "route.ts")));
    expect(missing).toEqual([]);
  });

  it("documents every operation a route file serves", () => {
    const documented = new Set(documentedOperations());
    expect(routeOperations().filter((op) => !documented.has(op))).toEqual([]);
  });

  it("documents no operation without a route file serving it", () => {
    const served = new Set(routeOperations());
    expect(documentedOperations().filter((op) => !served.has(op))).toEqual([]);
  });

  it("names a path parameter for each placeholder of a documented path", () => {
    const { paths } = openApiDocument() as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
    };
    const problems: string[] = [];
    for (const [p, item] of Object.entries(paths)) {
      const placeholders = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort();
      for (const [method, op] of Object.entries(item)) {
        const declared = (op.parameters ?? [])
          .filter((x) => x.in === "path")
          .map((x) => x.name)
          .sort();
        if (JSON.stringify(declared) !== JSON.stringify(placeholders))
          problems.push(`${method.toUpperCase()} ${p}: path parameters ${declared.join(", ") || "none"}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe("servedMethods", () => {
  const sample = (text: string) => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "route-")), "route.ts");
    fs.writeFileSync(file, text);
    return file;
  };

  it("counts exported handlers, not the 405 answers of otherMethods", () => {
    const file = sample(
      [
        "export async function GET() {}",
        "export const PUT = apiRoute(async () => ({}));",
        "export const { POST, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'PUT');",
      ].join("\n"),
    );
    expect(servedMethods(file).sort()).toEqual(["GET", "PUT"]);
  });

  it("counts renamed exports", () => {
    expect(servedMethods(sample("const h = () => null;\nexport { h as GET, h as DELETE };"))).toEqual([
      "GET",
      "DELETE",
    ]);
  });
});
