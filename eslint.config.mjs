import { defineConfig, globalIgnores } from "eslint/config";
import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";
import useClientImports from "./eslint/use-client-imports.mjs";

const root = import.meta.dirname;

// The layers (docs/architecture.md): UI (app/, components/) → transports (lib/server/, route handlers) → domain
// (lib/domain/) → data (db/). Nothing points back up. lib/domain and db run under plain Node (scripts, Vitest), so
// neither may load Next, React or server-only (which throws outside Next's server build).
const FRAMEWORK_MESSAGE =
  "lib/domain and db run under plain Node (scripts, Vitest) and know no framework: read what you need from Next, " +
  "next-auth or React in the route handler or lib/server and pass plain values (actor, db, input) to the domain.";
const frameworkImports = {
  paths: [
    { name: "next", message: FRAMEWORK_MESSAGE },
    { name: "next-auth", message: FRAMEWORK_MESSAGE },
    { name: "react", message: FRAMEWORK_MESSAGE },
    { name: "react-dom", message: FRAMEWORK_MESSAGE },
    {
      name: "server-only",
      message:
        "server-only throws outside Next's server build, and lib/domain and db load in scripts and tests: put the " +
        "guard on the lib/server module that uses them.",
    },
  ],
  patterns: [{ group: ["next/*", "next-auth/*", "react/*", "react-dom/*"], message: FRAMEWORK_MESSAGE }],
};

const UP_MESSAGE =
  "lib/server, lib/client, app/ and components/ call the domain, not the other way: pass the value in as an " +
  "argument, or move the shared pure code into lib/domain (a wire shape into lib/contract).";
const upwardZones = (target) => [
  { target, from: "./lib/server", message: UP_MESSAGE },
  { target, from: "./lib/client", message: UP_MESSAGE },
  { target, from: "./app", message: UP_MESSAGE },
  { target, from: "./components", message: UP_MESSAGE },
];

const eslintConfig = defineConfig([
  ...nextVitals,
  ...nextTs,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "warn",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // One confirmation style (issue 24): every destructive action asks through components/ui/ConfirmDialog.tsx.
    name: "ui/one-confirmation",
    files: ["app/**", "components/**"],
    rules: {
      "no-restricted-globals": [
        "error",
        { name: "confirm", message: "Ask with useConfirm() or <ConfirmDialog> (components/ui/ConfirmDialog.tsx)." },
      ],
      "no-restricted-properties": [
        "error",
        {
          object: "window",
          property: "confirm",
          message: "Ask with useConfirm() or <ConfirmDialog> (components/ui/ConfirmDialog.tsx).",
        },
      ],
    },
  },
  {
    name: "boundaries/domain-and-db",
    files: ["lib/domain/**", "db/**"],
    rules: {
      "no-restricted-imports": ["error", frameworkImports],
      "import/no-restricted-paths": [
        "error",
        {
          basePath: root,
          zones: [
            ...upwardZones("./lib/domain"),
            ...upwardZones("./db"),
            {
              target: "./db",
              from: "./lib",
              message:
                "db is the bottom layer and imports nothing from lib/: define the type or constant in db/ " +
                "(lib/domain or lib/contract may re-export it).",
            },
          ],
        },
      ],
    },
  },
  {
    name: "boundaries/domain-cycles",
    files: ["lib/domain/**"],
    // Packages are not followed (and not parsed): a cycle through node_modules is not ours to fix.
    settings: { "import/ignore": ["node_modules"] },
    rules: { "import/no-cycle": ["error", { ignoreExternal: true }] },
  },
  {
    // The one known cycle, lib/domain/approvals/settings.ts ↔ lib/domain/policies/store.ts (two homes for the current
    // policy version): allowed until the current version has one home; delete this block then.
    name: "boundaries/domain-cycles-known",
    files: ["lib/domain/approvals/settings.ts", "lib/domain/policies/store.ts"],
    rules: { "import/no-cycle": "off" },
  },
  {
    name: "boundaries/contract",
    files: ["lib/contract/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: ".*",
              allowTypeImports: true,
              message:
                "lib/contract holds the wire shapes only: use `import type`; a runtime value (schema, constant, " +
                "function) belongs in lib/domain or db/.",
            },
          ],
        },
      ],
    },
  },
  {
    name: "boundaries/use-client",
    files: ["**/*.ts", "**/*.tsx"],
    plugins: { local: { rules: { "use-client-imports": useClientImports } } },
    rules: { "local/use-client-imports": ["error", { root, typesOnlyFrom: ["db", "lib/server"] }] },
  },
  // Override default ignores of eslint-config-next.
  globalIgnores([
    // Default ignores of eslint-config-next:
    ".next/**",
    ".next-*/**",
    ".data/**",
    "test-results/**",
    "playwright-report/**",
    "bench-results/**",
    "out/**",
    "build/**",
    "next-env.d.ts",
  ]),
]);

export default eslintConfig;
