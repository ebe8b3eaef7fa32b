/**
 * `npx tsx scripts/walls-overhead.ts [DATABASE_URL]` — what the tenant walls (docs/decisions/0016-tenant-walls.md)
 * cost per database call: the same work on the owner's handle (no scope, no RLS) and on a scoped handle (the scope
 * statement, the app role and the policies), one call at a time so the figures are latencies, not contention.
 *
 * - `tx5`: a transaction of five statements shaped like an intent's (a locked read, a read, an upsert, an update, an
 *   insert) on a benchmark tenant's rows;
 * - `read`: one indexed read outside a transaction (what pages and list routes do).
 *
 * Default database postgres://postgres@127.0.0.1:5432/custody_bench (created and migrated when missing). Prints
 * microseconds per call (median of 5 rounds) and the difference.
 */
import { sql } from "drizzle-orm";
import { openDatabase, queryRows, type Db } from "@/db";
import { ensureDatabase } from "@/tests/support/env";
import { seedTenant } from "@/lib/domain/tenancy/seed";

const ROUNDS = 5;
const CALLS = Number(process.env.WALLS_CALLS ?? 400);

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) await fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / CALLS);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(ROUNDS / 2)]!;
}

async function main(): Promise<void> {
  const url = process.argv[2] ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/custody_bench";
  await ensureDatabase(url);
  const h = await openDatabase({ url, max: 1 });
  try {
    const seeded = await seedTenant(h.db, {
      slug: `walls-${Date.now().toString(36)}`,
      name: "Walls overhead",
      users: [],
      password: "walls-overhead-pw",
    });
    const tenantId = seeded.tenantId;
    const principal = "tenant/walls:user/1";
    await h.db.execute(
      sql`insert into principal_revocations (tenant_id, principal, reason, revoked_by) values (${tenantId}, ${principal}, 'overhead', 'walls') on conflict do nothing`,
    );
    let n = 0;
    const tx5 = (db: Db) => () =>
      db.transaction(async (tx) => {
        n += 1;
        await queryRows(
          tx,
          sql`select tenant_id from tenants t join api_keys k on k.tenant_id = t.id where t.id = ${tenantId} limit 1 for update of t`,
        );
        await queryRows(
          tx,
          sql`select principal from principal_revocations where tenant_id = ${tenantId} and principal = ${principal}`,
        );
        await queryRows(
          tx,
          sql`insert into tool_lookups (tenant_id, tool, url, timeout_ms) values (${tenantId}, 'walls.tool', 'http://127.0.0.1:9/x', 1000)
                               on conflict (tenant_id, tool) do update set timeout_ms = excluded.timeout_ms returning tool`,
        );
        await queryRows(
          tx,
          sql`update tool_lookups set updated_at = now() where tenant_id = ${tenantId} and tool = 'walls.tool' returning tool`,
        );
        await queryRows(
          tx,
          sql`insert into principal_revocations (tenant_id, principal, reason, revoked_by)
                               values (${tenantId}, ${`${principal}/${n % 50}`}, 'overhead', 'walls') on conflict do nothing returning 1`,
        );
      });
    const read = (db: Db) => () =>
      queryRows(db, sql`select id, name from api_keys where tenant_id = ${tenantId} order by created_at desc limit 10`);
    const scoped = h.scoped({ tenantId });
    // Warm up both paths (prepared plans, connection).
    await timed(tx5(h.db));
    await timed(tx5(scoped));
    const rows: Array<[string, number, number]> = [];
    for (const [name, make] of [
      ["tx5", tx5],
      ["read", read],
    ] as const) {
      const owner = await timed(make(h.db));
      const walled = await timed(make(scoped));
      rows.push([name, owner, walled]);
    }
    console.log(`calls per round ${CALLS}, median of ${ROUNDS} rounds, one connection`);
    console.log("work   owner µs  walled µs  extra µs");
    for (const [name, owner, walled] of rows) {
      console.log(
        `${name.padEnd(6)} ${owner.toFixed(0).padStart(8)} ${walled.toFixed(0).padStart(10)} ${(walled - owner).toFixed(0).padStart(9)}`,
      );
    }
  } finally {
    await h.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
