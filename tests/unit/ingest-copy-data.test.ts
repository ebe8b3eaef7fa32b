/**
 * The batch as COPY text (lib/domain/events/ingest.ts batchCopyData, decision 0021): one line per event, fields in the
 * staging table's order, COPY's escapes applied to free text, NULL as `\N`, attrs as the JSON already made, the
 * redaction kinds as an array literal.
 */
import { describe, expect, it } from "vitest";
import { batchCopyData, prepareBatch, type PreparedEvent } from "@/lib/domain/events/ingest";

/** Reads COPY text back as PostgreSQL does (text format: `\N` is NULL; `\\`, `\t`, `\n`, `\r` are escapes). */
function readCopy(data: Buffer): Array<Array<string | null>> {
  const text = data.toString("utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) =>
      line
        .split("\t")
        .map((f) =>
          f === "\\N"
            ? null
            : f.replace(/\\(.)/g, (_, c: string) => ({ t: "\t", n: "\n", r: "\r", "\\": "\\" })[c] ?? c),
        ),
    );
}

describe("batchCopyData", () => {
  it("writes each event as one line that reads back to the same fields", () => {
    const events = [
      {
        id: "a\tb\\c\nd\re",
        task_id: "task-1",
        plane: "environment",
        type: "sandbox.created",
        occurred_at: "2025-05-01T09:00:00.123456Z",
        attempt: 2,
        environment_id: "sbx\\1\t2",
        actor: "me\nyou",
        attrs: { s: 'quote " backslash \\ newline \n tab \t', u: "é ✓ 😀" },
      },
      { id: "plain", task_id: "task-1", plane: "session", type: "phase.changed", occurred_at: "2025-05-01T09:00:01Z" },
      {
        id: "secret",
        task_id: "task-1",
        plane: "tools",
        type: "tool.called",
        occurred_at: "2025-05-01T09:00:02Z",
        attrs: { password: "hunter2", headers: { authorization: "Bearer abcdefghijklmnopqrstuvwxyz" } },
      },
    ];
    // Validation refuses control characters in ids, sandbox ids and actors (lib/domain/names.ts); COPY's escapes still
    // hold for any text that reaches them, so the first event is prepared by hand.
    const first = events[0]!;
    const { prepared: validated, results } = prepareBatch({ events });
    expect(results.map((r) => r.status)).toEqual(["rejected", "stored", "stored"]);
    const byHand: PreparedEvent = {
      ...first,
      attrs: first.attrs!,
      plane: "environment",
      redaction_count: 0,
      redaction_kinds: null,
      attrs_json: JSON.stringify(first.attrs),
    };
    const prepared = [byHand, ...validated];
    const rows = readCopy(batchCopyData(prepared));
    const secret = prepared[2]!;
    expect(secret.redaction_kinds?.length).toBeGreaterThan(0);
    // The first field is the event's position in the batch (its receive order within the batch, decision 0032).
    expect(rows).toEqual([
      [
        "0",
        "a\tb\\c\nd\re",
        "task-1",
        "environment",
        "sandbox.created",
        "2025-05-01T09:00:00.123456Z",
        "sbx\\1\t2",
        "2",
        "me\nyou",
        JSON.stringify(events[0]!.attrs),
        "0",
        null,
      ],
      ["1", "plain", "task-1", "session", "phase.changed", "2025-05-01T09:00:01Z", null, null, null, "{}", "0", null],
      [
        "2",
        "secret",
        "task-1",
        "tools",
        "tool.called",
        "2025-05-01T09:00:02Z",
        null,
        null,
        null,
        secret.attrs_json,
        String(secret.redaction_count),
        `{${secret.redaction_kinds!.map((k) => `"${k}"`).join(",")}}`,
      ],
    ]);
    expect(secret.attrs_json).not.toContain("hunter2");
    expect(JSON.parse(rows[0]![9]!)).toEqual(events[0]!.attrs);
  });

  it("grows its buffer for attrs far larger than the estimate", () => {
    const big = "ü".repeat(14_000); // two UTF-8 bytes per character: 56 KB of attrs from 28,000 characters
    const { prepared } = prepareBatch({
      events: [
        {
          id: "big",
          task_id: "t",
          plane: "tools",
          type: "tool.called",
          occurred_at: "2025-05-01T09:00:00Z",
          attrs: { big, more: big },
        },
      ],
    });
    expect(prepared).toHaveLength(1);
    const rows = readCopy(batchCopyData(prepared));
    expect(JSON.parse(rows[0]![9]!)).toEqual({ big, more: big });
  });
});
