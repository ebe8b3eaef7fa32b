/**
 * Time formatting for the timeline, its event list and its drawer. Pure functions, no React.
 *
 * Two display zones: `utc` and `local` (the browser's zone). Granularity decisions for axis labels use
 * d3-time intervals rather than hand-written calendar arithmetic.
 */
import {
  timeDay,
  timeHour,
  timeMinute,
  timeMonth,
  timeSecond,
  timeYear,
  utcDay,
  utcHour,
  utcMinute,
  utcMonth,
  utcSecond,
  utcYear,
  type CountableTimeInterval,
} from "d3-time";

/** Which clock the axis labels and displayed times use. */
export type TimeZoneMode = "utc" | "local";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] as const;

type Parts = { y: number; mo: number; d: number; h: number; mi: number; s: number; ms: number };

function parts(date: Date, zone: TimeZoneMode): Parts {
  return zone === "utc"
    ? {
        y: date.getUTCFullYear(),
        mo: date.getUTCMonth(),
        d: date.getUTCDate(),
        h: date.getUTCHours(),
        mi: date.getUTCMinutes(),
        s: date.getUTCSeconds(),
        ms: date.getUTCMilliseconds(),
      }
    : {
        y: date.getFullYear(),
        mo: date.getMonth(),
        d: date.getDate(),
        h: date.getHours(),
        mi: date.getMinutes(),
        s: date.getSeconds(),
        ms: date.getMilliseconds(),
      };
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** Zone suffix: `UTC`, or the local offset at that instant as `UTC+01:00`. */
export function zoneSuffix(ms: number, zone: TimeZoneMode): string {
  if (zone === "utc") return "UTC";
  const offset = -new Date(ms).getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  const abs = Math.abs(offset);
  return `UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** Calendar date `YYYY-MM-DD` of an instant in the given zone. */
export function formatDate(ms: number, zone: TimeZoneMode): string {
  const p = parts(new Date(ms), zone);
  return `${p.y}-${pad(p.mo + 1)}-${pad(p.d)}`;
}

/** Wall-clock time `HH:MM:SS.mmm` (24 h) of an instant in the given zone. */
export function formatClock(ms: number, zone: TimeZoneMode): string {
  const p = parts(new Date(ms), zone);
  return `${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}.${pad(p.ms, 3)}`;
}

/** Full instant: `YYYY-MM-DD HH:MM:SS.mmm UTC` or `… UTC+01:00` for local; `invalid time` for NaN. */
export function formatInstant(ms: number, zone: TimeZoneMode): string {
  if (!Number.isFinite(ms)) return "invalid time";
  return `${formatDate(ms, zone)} ${formatClock(ms, zone)} ${zoneSuffix(ms, zone)}`;
}

/** Human duration between two instants: `850 ms`, `12.4 s`, `4 min 12 s`, `3 h 05 min`, `2 d 4 h`. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 60_000) return `${(abs / 1000).toFixed(1)} s`;
  if (abs < 3_600_000) return `${Math.floor(abs / 60_000)} min ${pad(Math.floor((abs % 60_000) / 1000))} s`;
  if (abs < 86_400_000) return `${Math.floor(abs / 3_600_000)} h ${pad(Math.floor((abs % 3_600_000) / 60_000))} min`;
  return `${Math.floor(abs / 86_400_000)} d ${Math.floor((abs % 86_400_000) / 3_600_000)} h`;
}

type Intervals = {
  second: CountableTimeInterval;
  minute: CountableTimeInterval;
  hour: CountableTimeInterval;
  day: CountableTimeInterval;
  month: CountableTimeInterval;
  year: CountableTimeInterval;
};

const UTC_INTERVALS: Intervals = {
  second: utcSecond,
  minute: utcMinute,
  hour: utcHour,
  day: utcDay,
  month: utcMonth,
  year: utcYear,
};
const LOCAL_INTERVALS: Intervals = {
  second: timeSecond,
  minute: timeMinute,
  hour: timeHour,
  day: timeDay,
  month: timeMonth,
  year: timeYear,
};

/**
 * Axis tick label (24 h clock), choosing the coarsest unit at which the tick is not on a boundary, as
 * d3's multi-scale format does: `.250` (sub-second), `:30` (seconds), `14:05`, `Mar 4`, `Mar`, `2025`.
 */
export function formatTick(date: Date, zone: TimeZoneMode): string {
  const iv = zone === "utc" ? UTC_INTERVALS : LOCAL_INTERVALS;
  const p = parts(date, zone);
  if (iv.second.floor(date) < date) return `.${pad(p.ms, 3)}`;
  if (iv.minute.floor(date) < date) return `:${pad(p.s)}`;
  if (iv.hour.floor(date) < date) return `${pad(p.h)}:${pad(p.mi)}`;
  if (iv.day.floor(date) < date) return `${pad(p.h)}:00`;
  if (iv.month.floor(date) < date) return `${MONTHS[p.mo] ?? ""} ${p.d}`;
  if (iv.year.floor(date) < date) return MONTHS[p.mo] ?? "";
  return String(p.y);
}
