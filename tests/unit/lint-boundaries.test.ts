/**
 * The layer boundaries of eslint.config.mjs, run through ESLint with the project's own config on code placed in each
 * layer: lib/domain and db load no framework and nothing above them, db imports nothing from lib, lib/contract imports
 * only types, and a "use client" module imports only types from db/ and lib/server/.
 */
import path from "node:path";
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
let eslint: ESLint;

const BOUNDARY_RULES = new Set([
  "no-restricted-imports",
  "import/no-restricted-paths",
  "@typescript-eslint/no-restricted-imports",
  "local/use-client-imports",
]);

/** The boundary rules that fire on `code` placed at `file` (a path from the repository root). */
async function boundaryRules(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).flatMap((m) => (m.ruleId && BOUNDARY_RULES.has(m.ruleId) ? [m.ruleId] : []));
}

beforeAll(() => {
  // import/no-cycle reads the linted file from disk, and these files exist only as text.
  eslint = new ESLint({ cwd: root, overrideConfig: { rules: { "import/no-cycle": "off" } } });
}, 60_000);

describe("lib/domain and db", () => {
  it.each([
    ["lib/domain/tasks/x.ts", `import { NextResponse } from "next/server";`],
    ["lib/domain/tasks/x.ts", `import type { Session } from "next-auth";`],
    ["lib/domain/tasks/x.ts", `import { useState } from "react";`],
    ["lib/domain/tasks/x.ts", `import "server-only";`],
    ["db/queries/x.ts", `import { cookies } from "next/headers";`],
  ])(
    "%s refuses a framework import: %s",
    async (file, code) => {
      expect(await boundaryRules(file, code)).toEqual(["no-restricted-imports"]);
    },
    30_000,
  );

  it.each([
    ["lib/domain/tasks/x.ts", `import { requireActor } from "@/lib/server/actor";`],
    ["lib/domain/tasks/x.ts", `import { requireActor } from "../../server/actor";`],
    ["lib/domain/tasks/x.ts", `import { ApiError } from "@/lib/client/api";`],
    ["lib/domain/tasks/x.ts", `import { Time } from "@/components/ui/time";`],
    ["db/queries/x.ts", `import { DomainError } from "@/lib/domain/errors";`],
    ["db/schema/x.ts", `import type { TaskView } from "@/lib/contract/api";`],
  ])(
    "%s refuses an upward import: %s",
    async (file, code) => {
      expect(await boundaryRules(file, code)).toEqual(["import/no-restricted-paths"]);
    },
    30_000,
  );

  it("lib/domain may import db and lib/contract", async () => {
    const code = `import { getDb } from "@/db";\nimport type { TaskView } from "@/lib/contract/api";\nexport { getDb };\nexport type T = TaskView;`;
    expect(await boundaryRules("lib/domain/tasks/x.ts", code)).toEqual([]);
  }, 30_000);
});

describe("lib/contract", () => {
  it("refuses a value import", async () => {
    expect(await boundaryRules("lib/contract/x.ts", `import { z } from "zod";\nexport const s = z.string();`)).toEqual([
      "@typescript-eslint/no-restricted-imports",
    ]);
  }, 30_000);

  it("admits type imports", async () => {
    const code = `import type { Plane } from "@/db/schema/enums";\nimport { type Role } from "@/db/schema/enums";\nexport type P = Plane | Role;`;
    expect(await boundaryRules("lib/contract/x.ts", code)).toEqual([]);
  }, 30_000);
});

describe('"use client" modules', () => {
  const client = (body: string) => `/** A component. */\n"use client";\n${body}\n`;

  it.each([
    [`import { EXERCISE_OUTCOMES } from "@/db/schema/map-vocabulary";`],
    [`import { requireActor } from "@/lib/server/actor";`],
    [`import { MAP_LAYERS, type MapLayer } from "../../db/schema/map-vocabulary";`],
    [`export { ROLES } from "@/db/schema/enums";`],
    [`const m = import("@/db");`],
  ])(
    "refuse a value from db/ or lib/server/: %s",
    async (code) => {
      expect(await boundaryRules("components/maps/X.tsx", client(code))).toEqual(["local/use-client-imports"]);
    },
    30_000,
  );

  it("admit types from db/ and lib/server/, and values from lib/domain", async () => {
    const code = client(
      [
        `import type { Role } from "@/db/schema/enums";`,
        `import { type MapLayer } from "@/db/schema/map-vocabulary";`,
        `import type { Actor } from "@/lib/server/actor";`,
        `import { MAP_LAYERS } from "@/lib/domain/maps/layers";`,
        `export type X = Role | MapLayer | Actor | (typeof MAP_LAYERS)[number];`,
      ].join("\n"),
    );
    expect(await boundaryRules("components/maps/X.tsx", code)).toEqual([]);
  }, 30_000);

  it("leave a module without the directive alone", async () => {
    const code = `import { EXERCISE_OUTCOMES } from "@/db/schema/map-vocabulary";\nexport const n = EXERCISE_OUTCOMES.length;`;
    expect(await boundaryRules("components/maps/X.tsx", code)).toEqual([]);
  }, 30_000);
});
