/**
 * JSON text read under the repo's checks (decision 0009): a text nested past the limit is refused before `JSON.parse`
 * builds it, on every path that parses text a runtime or another system sent (request bodies, trace attributes).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { checkJsonText, parseJsonText, parseJsonWithin } from "@/lib/domain/json/text";
import { jsonish } from "@/lib/domain/traces/spans";
import { readJson } from "@/lib/server/route";
import { DomainError } from "@/lib/domain/errors";

/** A 1 MiB body of brackets: valid JSON, 524,000 levels deep. */
const DEEP = "[".repeat(524_000) + "]".repeat(524_000);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("parseJsonText", () => {
  it("refuses a text nested past the limit without parsing it", () => {
    const parse = vi.spyOn(JSON, "parse");
    const read = parseJsonText(DEEP, 32);
    expect(read).toEqual({ problem: { path: "[0]".repeat(33), message: "is nested deeper than 32 levels" } });
    expect(parse).not.toHaveBeenCalled();
  });

  it("refuses a deep text as too deep whether or not the rest is JSON", () => {
    expect(parseJsonText("[".repeat(100_000) + "}", 32)).toMatchObject({
      problem: { message: "is nested deeper than 32 levels" },
    });
  });

  it("names the same path as the checks on parsed text, through keys and strings holding brackets", () => {
    const texts = [
      `{"a\\"b":[{"c":${'{"d":'.repeat(40)}1${"}".repeat(40)}}]}`,
      `[1,{"q":"[[[[","z":${"[".repeat(40)}${"]".repeat(40)}}]`,
    ];
    for (const text of texts) {
      const read = parseJsonText(text, 32);
      expect("problem" in read && read.problem).toEqual(checkJsonText(text, 32));
    }
  });

  it("parses a text within the limit and still applies the other checks", () => {
    expect(parseJsonText(`{"x":"${"[".repeat(40)}"}`, 32)).toEqual({ value: { x: "[".repeat(40) } });
    expect(parseJsonText(`${"[".repeat(33)}${"]".repeat(33)}`, 32)).toHaveProperty("value");
    expect(parseJsonText(`{"a":1,"a":2}`, 32)).toMatchObject({ problem: { path: "a" } });
    expect(parseJsonText(`{"a": [1, 2, }`, 32)).toEqual({ invalid: true });
    expect(parseJsonText(`"open`, 32)).toEqual({ invalid: true });
  });
});

describe("request bodies and trace attributes", () => {
  it("readJson refuses a 1 MiB nested body (validation_failed) before parsing it", async () => {
    const parse = vi.spyOn(JSON, "parse");
    const req = new Request("http://localhost/api/v1/events", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: DEEP,
    });
    const err = await readJson(req, 1024 * 1024, { perItem: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("validation_failed");
    expect((err as DomainError).message).toMatch(/nested deeper than 512 levels/);
    expect(parse).not.toHaveBeenCalled();
  });

  it("keeps a trace attribute holding deeply nested JSON as its text, unparsed", () => {
    const deep = "[".repeat(5_000) + "]".repeat(5_000);
    const parse = vi.spyOn(JSON, "parse");
    expect(jsonish(deep)).toBe(`${deep.slice(0, 8 * 1024)}…[cut]`);
    expect(parse).not.toHaveBeenCalled();
    expect(jsonish(`{"city":"Paris"}`)).toEqual({ city: "Paris" });
  });
});

describe("parseJsonWithin (text the server only reads and shows)", () => {
  it("takes what JSON.parse takes within the limit, repeated keys and long numbers included", () => {
    expect(parseJsonWithin(`{"id":12345678901234567890,"a":1,"a":2}`, 32)).toEqual({
      value: { id: Number("12345678901234567890"), a: 2 },
    });
    expect(parseJsonWithin(`not json`, 32)).toBeNull();
  });

  it("does not parse a text nested past the limit", () => {
    const parse = vi.spyOn(JSON, "parse");
    expect(parseJsonWithin(DEEP, 32)).toBeNull();
    expect(parse).not.toHaveBeenCalled();
  });

  it("keeps a trace's tool arguments holding a long number as an object", () => {
    expect(jsonish(`{"order_id":12345678901234567890}`)).toEqual({ order_id: Number("12345678901234567890") });
  });
});
