/**
 * Vitest: two projects.
 * - `unit`: tests/unit, plain Node, no database, no server.
 * - `integration`: tests/integration against real PostgreSQL and the built app started by
 *   tests/integration/global-setup.ts (run `npm run build` first). Files run one at a time: the server and
 *   the database share the machine's two cores with the test process.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = path.dirname(fileURLToPath(import.meta.url));
const alias = { "@": root };

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: "unit",
          root,
          include: ["tests/unit/**/*.test.ts"],
          environment: "node",
          testTimeout: 10_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "integration",
          root,
          include: ["tests/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: [path.join(root, "tests/integration/global-setup.ts")],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The whole demo killed with SIGKILL and restarted (`npm run test:crash-demo`): two full demo starts, too slow
        // for every CI run; its parts run in the integration project.
        resolve: { alias },
        test: {
          name: "crash-demo",
          root,
          include: ["tests/crash-demo/**/*.test.ts"],
          environment: "node",
          globalSetup: [path.join(root, "tests/integration/global-setup.ts")],
          fileParallelism: false,
          testTimeout: 600_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
