/**
 * A process for the PGlite durability test (tests/integration/pglite-crash.test.ts), run with tsx:
 *
 *   tsx tests/support/pglite-writer.ts write <dir>    opens the embedded database in <dir> as the server does
 *                                                     (`openDatabase`: data-directory lock, migrations), then commits
 *                                                     transactions until it is killed, printing `acked <n>` after each
 *                                                     commit returned: one row `n` (2 kB) plus a running total, in one
 *                                                     transaction through Drizzle, as the domain verbs write
 *   tsx tests/support/pglite-writer.ts verify <dir>   opens it and prints `{"rows", "max", "total"}` as JSON
 *
 * Prints `ready <max>` once the database is open. Not part of the app.
 */
import { sql } from "drizzle-orm";
import { openDatabase, queryRows } from "@/db";

async function main(): Promise<void> {
  const [mode, dir] = process.argv.slice(2);
  if ((mode !== "write" && mode !== "verify") || !dir) throw new Error("usage: pglite-writer.ts write|verify <dir>");
  const handle = await openDatabase({ dir });
  const { db } = handle;
  await db.execute(sql`create table if not exists crash_probe (n integer primary key, payload text not null)`);
  await db.execute(sql`create table if not exists crash_probe_total (id integer primary key, total integer not null)`);
  await db.execute(sql`insert into crash_probe_total (id, total) values (1, 0) on conflict do nothing`);
  const [state] = await queryRows<{ rows: number; max: number; total: number }>(
    db,
    sql`select (select count(*) from crash_probe)::int as rows, (select coalesce(max(n), 0) from crash_probe)::int as max,
               (select total from crash_probe_total where id = 1)::int as total`,
  );
  if (mode === "verify") {
    console.log(JSON.stringify(state));
    await handle.close();
    return;
  }
  console.log(`ready ${state!.max}`);
  const payload = "x".repeat(2000);
  for (let n = state!.max + 1; ; n++) {
    await db.transaction(async (tx) => {
      await tx.execute(sql`insert into crash_probe (n, payload) values (${n}, ${payload})`);
      await tx.execute(sql`update crash_probe_total set total = total + 1 where id = 1`);
    });
    process.stdout.write(`acked ${n}\n`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : String(err));
  process.exit(1);
});
