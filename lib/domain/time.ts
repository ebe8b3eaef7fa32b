/**
 * Times that runtimes and people send (event `occurred_at`, receipt `completed_at`, …): ISO 8601 with a zone. Each
 * refusal says what is wrong and what to send instead (docs/api.md#conventions: ISO 8601 with a zone; a leap second
 * gets its own message, not one about zones). Times keep microseconds, as PostgreSQL's `timestamptz` stores them:
 * digits past the sixth are dropped, never rounded (PostgreSQL alone would round `23:59:59.9999999Z` up to the next
 * day).
 */
import { z } from "zod";

/** The ISO 8601 pattern zod's `z.iso.datetime({ offset: true })` applies (calendar-checked, zone required). */
export const ISO_TIME_PATTERN: RegExp = z.regexes.datetime({ offset: true });

const EXAMPLE = "e.g. 2026-11-29T10:00:00Z or 2026-11-29T12:00:00+02:00";

/** Event times from before 2000 or more than a day ahead are clock errors, not history. */
export function plausibleTime(iso: string): boolean {
  const t = Date.parse(iso);
  return t >= Date.UTC(2000, 0, 1) && t <= Date.now() + 24 * 60 * 60 * 1000;
}

/** Why `value` is not an ISO 8601 time with a zone, naming `field` and what to send; null when it is one. */
export function timeProblem(field: string, value: string): string | null {
  if (ISO_TIME_PATTERN.test(value)) return null;
  if (value.length > 64)
    return `${field} must be an ISO 8601 time with a zone, ${EXAMPLE} (this value is ${value.length} characters long)`;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:60(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?$/.test(value)) {
    return `${field} is a leap second (:60), which PostgreSQL and JavaScript times cannot hold; send the last instant before it (…:59.999999) or the next second (…:00 of the next minute) instead`;
  }
  if (ISO_TIME_PATTERN.test(`${value}Z`))
    return `${field} has no zone: add Z for UTC or an offset such as +02:00 (${EXAMPLE})`;
  const normalized = value.replace(/^(\d{4}-\d\d-\d\d)[ t]/, "$1T").replace(/z$/, "Z");
  if (normalized !== value && ISO_TIME_PATTERN.test(normalized))
    return `${field} must be written ${normalized} (an upper-case T between date and time, Z or ±hh:mm for the zone)`;
  const date = /^(\d{4}-\d\d-\d\d)T/.exec(value);
  if (date && ISO_TIME_PATTERN.test(value.replace(date[1]!, "2000-01-01")))
    return `${field} is not a date on the calendar (${date[1]}); ${EXAMPLE}`;
  return `${field} must be an ISO 8601 time with a zone, ${EXAMPLE}`;
}

/** `value` with fractional seconds cut to six digits (microseconds); other times unchanged. */
export function truncateToMicroseconds(value: string): string {
  const dot = value.indexOf(".");
  if (dot < 0) return value;
  let end = dot + 1;
  while (end < value.length && value.charCodeAt(end) >= 48 && value.charCodeAt(end) <= 57) end++;
  return end - dot - 1 > 6 ? value.slice(0, dot + 7) + value.slice(end) : value;
}

/** True when the fractional seconds of an ISO time have at most six digits (no truncation needed). */
export function withinMicroseconds(value: string): boolean {
  return truncateToMicroseconds(value) === value;
}

/** A zod schema for a time kept as sent (inside a signed record): the checks of {@link isoTimeField}, no change. */
export function isoTimeText(field: string) {
  return z
    .string({ error: () => `${field} must be a string: an ISO 8601 time with a zone (${EXAMPLE})` })
    .check((ctx) => {
      const why = timeProblem(field, ctx.value);
      if (why) ctx.issues.push({ code: "custom", input: ctx.value, message: why });
    })
    .meta({ format: "date-time" });
}

/**
 * A zod schema for one time field: a string, ISO 8601 with a zone, optionally between 2000 and one day from now;
 * the output keeps at most six fractional digits. Messages start with the field name.
 */
export function isoTimeField(field: string, opts: { plausible?: boolean } = {}) {
  return z
    .string({
      error: (iss) =>
        iss.input === undefined
          ? `${field} is required: an ISO 8601 time with a zone (${EXAMPLE})`
          : `${field} must be a string: an ISO 8601 time with a zone (${EXAMPLE})`,
    })
    .check((ctx) => {
      const why = timeProblem(field, ctx.value);
      if (why) ctx.issues.push({ code: "custom", input: ctx.value, message: why });
      else if (opts.plausible && !plausibleTime(ctx.value)) {
        ctx.issues.push({
          code: "custom",
          input: ctx.value,
          message: `${field} must lie between the year 2000 and one day from now (check the sender's clock)`,
        });
      }
    })
    .meta({ format: "date-time" })
    .transform(truncateToMicroseconds);
}
