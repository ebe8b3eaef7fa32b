/**
 * The sign-in throttle (numbers and rules in ./sign-in-limits.ts). Every password check — sign-in, accepting an
 * invitation as an existing account, changing one's password — first claims a check for its email and source
 * with ONE guarded statement that counts the try as a failure in advance; a try whose claim is refused is
 * answered without verifying the password. So 40 concurrent guesses get at most the allowed number of checks:
 * the upsert serialises on the (email, source) row and re-evaluates its guard on the newest row version, with no
 * read-then-write in between. A right password then gives its pre-counted failure back.
 *
 * Past the email's ceiling across all sources, an address that failed in its window gets no further check until
 * that window ends, while an address with no failures is still checked: guesses from many addresses are bounded
 * per address, and the person at their own address is never locked out by them.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import {
  MAX_EMAIL_SIGN_IN_FAILURES,
  MAX_SIGN_IN_DELAY_SECONDS,
  MAX_SIGN_IN_FAILURES,
  SIGN_IN_WINDOW_MINUTES,
  signInDelaySeconds,
} from "./sign-in-limits";

/** The source row that counts one email's failures across every address. */
export const ALL_SOURCES = "*";

export type ThrottleClaim =
  | { ok: true }
  | {
      ok: false;
      /** Seconds until a try from this source may be checked again (at least 1). */
      retryAfterSeconds: number;
      /** `delay`: wait a little (growing delays); `locked`: the window's failures are used up. */
      kind: "delay" | "locked";
    };

/** Delays (seconds) indexed by the failure count 1…MAX, as a PostgreSQL array literal (one source of truth). */
const DELAYS = `{${Array.from({ length: MAX_SIGN_IN_FAILURES }, (_, i) => signInDelaySeconds(i + 1)).join(",")}}`;
const WINDOW = sql`make_interval(mins => ${SIGN_IN_WINDOW_MINUTES})`;

/** Lower-cased, trimmed email (at most 320 characters), the throttle's key. */
export function throttleEmail(email: string): string {
  return email.trim().toLowerCase().slice(0, 320);
}

/**
 * Claims one password check for `email` from `source`, counting it as a failure until
 * {@link recordSignInSuccess} gives it back.
 * @param source the client address (lib/server/client-address.ts); never {@link ALL_SOURCES}.
 * @returns ok, or why not and for how long.
 */
export async function claimSignInCheck(db: Db, email: string, source: string): Promise<ThrottleClaim> {
  const who = throttleEmail(email);
  const expired = sql`t.window_started_at <= now() - ${WINDOW}`;
  // The pair's guard asks whether the email is past its ceiling (`busy`) from the email's all-sources row read with a
  // row lock (`mail_now`, FOR UPDATE): a claim that waited for a concurrent one reads the count that one committed.
  // The guard runs only when the pair's row exists: an address with no failures in its window is always checked.
  const [row] = await queryRows<{ pair: number | null; mail: number | null }>(
    db,
    sql`with mail_now as (
          select m.failures, m.window_started_at from sign_in_throttle as m
          where m.email = ${who} and m.source = ${ALL_SOURCES}
          for update
        ), busy as (
          select 1 from mail_now
          where failures >= ${MAX_EMAIL_SIGN_IN_FAILURES} and window_started_at > now() - ${WINDOW}
        ), pair as (
          insert into sign_in_throttle as t (email, source, failures, window_started_at, last_failure_at, next_allowed_at)
          values (${who}, ${source}, 1, now(), now(), now() + make_interval(secs => ${signInDelaySeconds(1)}))
          on conflict (email, source) do update set
            failures = case when ${expired} then 1 else t.failures + 1 end,
            window_started_at = case when ${expired} then now() else t.window_started_at end,
            last_failure_at = now(),
            next_allowed_at = now() + make_interval(secs => coalesce(
              (${DELAYS}::int[])[case when ${expired} then 1 else t.failures + 1 end], ${MAX_SIGN_IN_DELAY_SECONDS}))
          where ${expired}
             or (t.failures < ${MAX_SIGN_IN_FAILURES} and t.next_allowed_at <= now() and not exists (select 1 from busy))
          returning t.failures
        ), mail as (
          insert into sign_in_throttle as t (email, source, failures, window_started_at, last_failure_at, next_allowed_at)
          select ${who}, ${ALL_SOURCES}, 1, now(), now(), now() from pair
          on conflict (email, source) do update set
            failures = case when ${expired} then 1 else t.failures + 1 end,
            window_started_at = case when ${expired} then now() else t.window_started_at end,
            last_failure_at = now()
          returning t.failures
        )
        select (select failures from pair) as pair, (select failures from mail) as mail`,
  );
  if (row?.pair != null && row.mail != null) return { ok: true };
  return refusal(db, who, source);
}

/**
 * Why a claim was refused: the longest wait among the pair's own rules (its delay, its lock) and, while the email is
 * past its ceiling, the end of the sooner of the two windows (either ending gives this address a check again).
 */
async function refusal(db: Db, email: string, source: string): Promise<ThrottleClaim> {
  const rows = await queryRows<{
    source: string;
    failures: number;
    until_window: string | number;
    until_next: string | number;
  }>(
    db,
    sql`select source, failures,
               ceil(extract(epoch from (window_started_at + ${WINDOW} - now()))) as until_window,
               ceil(extract(epoch from (next_allowed_at - now()))) as until_next
        from sign_in_throttle where email = ${email} and source in (${source}, ${ALL_SOURCES})`,
  );
  const pair = rows.find((r) => r.source !== ALL_SOURCES && Number(r.until_window) > 0);
  const mail = rows.find((r) => r.source === ALL_SOURCES && Number(r.until_window) > 0);
  let wait = 1;
  let kind: "delay" | "locked" = "delay";
  if (pair) {
    if (Number(pair.failures) >= MAX_SIGN_IN_FAILURES) {
      kind = "locked";
      wait = Math.max(wait, Number(pair.until_window));
    } else {
      wait = Math.max(wait, Number(pair.until_next));
    }
    if (mail && Number(mail.failures) >= MAX_EMAIL_SIGN_IN_FAILURES) {
      kind = "locked";
      wait = Math.max(wait, Math.min(Number(pair.until_window), Number(mail.until_window)));
    }
  }
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)), kind };
}

/**
 * A checked password was right: forgets the failures of this email at this source and gives the email's
 * all-sources row back the failure claimed in advance (failures from other addresses stay counted).
 */
export async function recordSignInSuccess(db: Db, email: string, source: string): Promise<void> {
  const who = throttleEmail(email);
  await db.execute(sql`
    with forgotten as (delete from sign_in_throttle where email = ${who} and source = ${source})
    update sign_in_throttle set failures = greatest(failures - 1, 0) where email = ${who} and source = ${ALL_SOURCES}`);
}

/** Drops rows whose last failure is more than a day old (called after a failed check; cheap with its index). */
export async function pruneSignInThrottle(db: Db): Promise<void> {
  await db.execute(sql`delete from sign_in_throttle where last_failure_at < now() - interval '1 day'`);
}

/** The message a person reads when a try was not checked. */
export function throttleMessage(claim: Extract<ThrottleClaim, { ok: false }>): string {
  const s = claim.retryAfterSeconds;
  const wait = s >= 120 ? `${Math.ceil(s / 60)} minutes` : `${s} second${s === 1 ? "" : "s"}`;
  return claim.kind === "locked"
    ? `Too many failed sign-ins for this email. Try again in ${wait}, or ask an owner to unlock it under Settings → Members.`
    : `Too many failed sign-ins in a row for this email: wait ${wait} before the next try.`;
}
