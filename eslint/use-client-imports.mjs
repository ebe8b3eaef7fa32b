/**
 * ESLint rule `use-client-imports`: a module marked "use client" ships to the browser, so from the folders named in
 * `typesOnlyFrom` (paths relative to `root`, e.g. `db`, `lib/server`) it may import types only. A value import from
 * there would pull a database driver, secrets or server code into the client bundle.
 *
 * Options: `{ root: string, typesOnlyFrom: string[] }`. Resolves `@/…` (the tsconfig alias for `root`) and relative
 * specifiers; package imports are left alone. Checks `import`, `export … from` and `import()`.
 */
import path from "node:path";

function isClientModule(program) {
  for (const statement of program.body) {
    if (statement.type !== "ExpressionStatement" || typeof statement.directive !== "string") return false;
    if (statement.directive === "use client") return true;
  }
  return false;
}

/** True when the declaration brings in values, not only types (`import type`, or every specifier `type`). */
function importsValues(node) {
  const kind = node.importKind ?? node.exportKind;
  if (kind === "type") return false;
  const specifiers = node.specifiers ?? [];
  if (specifiers.length === 0) return true;
  return specifiers.some((s) => (s.importKind ?? s.exportKind) !== "type");
}

const useClientImports = {
  meta: {
    type: "problem",
    docs: { description: 'A "use client" module imports only types from server-side folders.' },
    schema: [
      {
        type: "object",
        properties: { root: { type: "string" }, typesOnlyFrom: { type: "array", items: { type: "string" } } },
        required: ["root", "typesOnlyFrom"],
        additionalProperties: false,
      },
    ],
    messages: {
      valueImport:
        '"use client" code ships to the browser: import only types from {{folder}}/ (`import type`). Take values ' +
        "from lib/contract or a pure lib/domain module, or fetch them through the API.",
    },
  },
  create(context) {
    const { root, typesOnlyFrom } = context.options[0];
    const filename = context.filename;

    function restrictedFolder(specifier) {
      let target;
      if (specifier.startsWith("@/")) target = path.join(root, specifier.slice(2));
      else if (specifier.startsWith(".")) target = path.resolve(path.dirname(filename), specifier);
      else return null;
      const rel = path.relative(root, target).split(path.sep).join("/");
      return typesOnlyFrom.find((folder) => rel === folder || rel.startsWith(`${folder}/`)) ?? null;
    }

    function check(node, source) {
      if (!source || source.type !== "Literal" || typeof source.value !== "string") return;
      const folder = restrictedFolder(source.value);
      if (folder) context.report({ node, messageId: "valueImport", data: { folder } });
    }

    let client = false;
    return {
      Program(program) {
        client = isClientModule(program);
      },
      ImportDeclaration(node) {
        if (client && importsValues(node)) check(node, node.source);
      },
      ExportNamedDeclaration(node) {
        if (client && node.source && importsValues(node)) check(node, node.source);
      },
      ExportAllDeclaration(node) {
        if (client && node.exportKind !== "type") check(node, node.source);
      },
      ImportExpression(node) {
        if (client) check(node, node.source);
      },
    };
  },
};

export default useClientImports;
