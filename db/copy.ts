/**
 * `COPY … FROM STDIN` on PostgreSQL inside a transaction, for bulk ingest.
 */
import type { Writable } from "node:stream";
import { PgTransaction } from "drizzle-orm/pg-core";
import { is } from "drizzle-orm";
import type { Db, PgJsLike } from "./types";

/** A postgres.js COPY query: resolves with the stream once the server is in COPY mode (see {@link copyIn}). */
type PgJsCopyQuery = PromiseLike<unknown> & {
  writable: () => Promise<Writable>;
  resolve: (result: { count: number | null }) => void;
  reject: (err: unknown) => void;
};

/**
 * `COPY … FROM STDIN` on PostgreSQL, on the connection of the transaction `tx`: sends `data` (already in the COPY
 * format the statement names) and resolves when the server has stored it.
 * @param tx a Drizzle transaction (COPY into a temporary table only makes sense on the transaction's connection).
 * @param statement the `COPY … FROM STDIN` statement (no parameters).
 * @param data the rows, made only when the driver can take them (a caller on PGlite does not build them for nothing).
 * @param before a statement without parameters to run first (e.g. creating the target table), sent together with the
 *   COPY so both cost one round trip.
 * @returns the number of rows copied, or null on PGlite, whose driver has no COPY from a client stream (nothing is
 *   run then): the caller takes its other path.
 * @throws the server's error when it refuses `before` or the data (the transaction is then aborted); Error when `tx`
 *   is not a transaction.
 */
export async function copyIn(
  tx: Db,
  statement: string,
  data: () => string | Buffer,
  before?: string,
): Promise<number | null> {
  if (!is(tx, PgTransaction)) throw new Error("copyIn needs a transaction: COPY goes to its connection");
  const client = (tx as unknown as { session?: { client?: { unsafe?: unknown } } }).session?.client;
  if (!client || typeof client.unsafe !== "function") return null;
  const pg = client as unknown as PgJsLike;
  const setup = before === undefined ? null : Promise.resolve(pg.unsafe(before).execute());
  setup?.catch(() => {}); // awaited below; this only keeps it from counting as unhandled meanwhile
  const query = pg.unsafe(statement) as unknown as PgJsCopyQuery;
  let stream: Writable;
  try {
    stream = await query.writable();
  } catch (err) {
    await setup; // its own error first: the COPY only failed because the transaction was aborted
    throw err;
  }
  await setup;
  return new Promise<number>((resolve, reject) => {
    // postgres.js (3.4) resolves the query with the stream when COPY starts, and settles the same query object again
    // when the server answers the end of the data: `resolve(result)` after the command completes, `reject(error)` when
    // it refused a row. A promise settles once, so those calls would be lost — and after a refusal the stream's
    // 'finish' never comes. Taking them over here turns the server's answer into this promise's.
    query.resolve = (result) => resolve(result?.count ?? 0);
    query.reject = reject;
    stream.on("error", reject);
    stream.end(data());
  });
}
