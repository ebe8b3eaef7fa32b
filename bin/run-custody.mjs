#!/usr/bin/env node
// `npx run-custody …`: runs the TypeScript command line (scripts/run-custody.ts) with tsx, passing the arguments, the
// output and the exit code through.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const script = fileURLToPath(new URL("../scripts/run-custody.ts", import.meta.url));
const root = fileURLToPath(new URL("..", import.meta.url));
const res = spawnSync(process.execPath, [require.resolve("tsx/cli"), script, ...process.argv.slice(2)], {
  stdio: "inherit",
  // Paths on the command line stay relative to where it was run; the project's tsconfig resolves its `@/` imports.
  env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
});
process.exit(res.status ?? 1);
