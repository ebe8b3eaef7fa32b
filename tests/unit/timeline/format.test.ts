import { describe, expect, it } from "vitest";
import { formatClock, formatDuration, formatInstant, formatTick } from "../../../components/timeline/format";

describe("time formatting", () => {
  it("formats instants, clocks and durations in UTC", () => {
    const ms = Date.UTC(2025, 2, 4, 9, 5, 7, 42);
    expect(formatInstant(ms, "utc")).toBe("2025-03-04 09:05:07.042 UTC");
    expect(formatClock(ms, "utc")).toBe("09:05:07.042");
    expect(formatInstant(Number.NaN, "utc")).toBe("invalid time");
    expect(formatInstant(ms, "local")).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.042 UTC[+-]\d{2}:\d{2}$/);
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(12_400)).toBe("12.4 s");
    expect(formatDuration(252_000)).toBe("4 min 12 s");
    expect(formatDuration(3 * 3_600_000 + 5 * 60_000)).toBe("3 h 05 min");
  });

  it("labels axis ticks at the coarsest unit that is not a boundary", () => {
    expect(formatTick(new Date(Date.UTC(2025, 2, 4, 9, 5, 7, 250)), "utc")).toBe(".250");
    expect(formatTick(new Date(Date.UTC(2025, 2, 4, 9, 5, 30)), "utc")).toBe(":30");
    expect(formatTick(new Date(Date.UTC(2025, 2, 4, 14, 5)), "utc")).toBe("14:05");
    expect(formatTick(new Date(Date.UTC(2025, 2, 4, 18)), "utc")).toBe("18:00");
    expect(formatTick(new Date(Date.UTC(2025, 2, 4)), "utc")).toBe("Mar 4");
    expect(formatTick(new Date(Date.UTC(2025, 2, 1)), "utc")).toBe("Mar");
    expect(formatTick(new Date(Date.UTC(2025, 0, 1)), "utc")).toBe("2025");
  });
});
