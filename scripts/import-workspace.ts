/**
 * `npm run import-workspace -- <bundle.tar.gz> [--slug <slug>]`: restores a workspace bundle (from
 * `GET /api/v1/export`) on this server's database — PostgreSQL when `DATABASE_URL` is set, else the embedded PGlite in
 * `CUSTODY_DATA_DIR` (stop the server first). The bundle is verified first; nothing is written unless every check
 * passes. The workspace is created under the bundle's workspace id and is read-only (decision 0038). Then add its
 * owner: `npm run setup -- --workspace <slug> --owner <email>`.
 * Exit status: 0 imported, 2 bad input (a bundle that does not verify, a workspace already here), 1 anything else.
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { openDatabase } from "@/db";
import { importWorkspaceBundle } from "@/lib/domain/export/import-workspace";
import { isDomainError } from "@/lib/domain/errors";

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ options: { slug: { type: "string" } }, allowPositionals: true });
  const file = positionals[0];
  if (!file) {
    console.error("[import] usage: npm run import-workspace -- <bundle.tar.gz> [--slug <slug>]");
    process.exit(2);
  }
  const bundle = new Uint8Array(fs.readFileSync(file));
  const handle = await openDatabase({ url: process.env.DATABASE_URL || undefined, max: 2 });
  try {
    const r = await importWorkspaceBundle(handle.db, { bundle, ...(values.slug ? { slug: values.slug } : {}) });
    console.log(`[import] workspace "${r.slug}" (${r.name}) imported read-only: ${r.tasks} tasks; sha256 ${r.digest}`);
    for (const [table, n] of Object.entries(r.restored)) console.log(`[import]   ${table}: ${n}`);
    console.log(`[import] add its owner: npm run setup -- --workspace ${r.slug} --owner <email>`);
  } catch (err) {
    if (isDomainError(err)) {
      console.error(`[import] ${err.message}`);
      process.exitCode = 2;
    } else throw err;
  } finally {
    await handle.close();
  }
}

main().catch((err: unknown) => {
  console.error(`[import] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
