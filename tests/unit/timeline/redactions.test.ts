import { describe, expect, it } from "vitest";
import { countRedactedValues } from "../../../components/timeline/model/redactions";

describe("countRedactedValues", () => {
  it("counts redaction markers anywhere in a JSON value", () => {
    expect(
      countRedactedValues({
        headers: { authorization: "[REDACTED]", cookie: "a=[REDACTED]; b=[REDACTED]" },
        list: ["ok", "[REDACTED]"],
        n: 3,
      }),
    ).toBe(4);
    expect(countRedactedValues({ clean: "value" })).toBe(0);
  });
});
