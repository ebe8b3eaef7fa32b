import { describe, expect, it } from "vitest";
import { PLANES } from "../../../db/schema/enums";
import { LANES, laneIndex, planeLabel } from "../../../components/timeline/model/lanes";

describe("lanes", () => {
  it("has the four planes in PLANES order with their visible labels", () => {
    expect(LANES.map((l) => l.plane)).toEqual([...PLANES]);
    expect(LANES.map((l) => l.label)).toEqual(["Session", "Environment", "Tools & egress", "Vault"]);
    expect(laneIndex("tools")).toBe(2);
    expect(planeLabel("tools")).toBe("Tools & egress");
  });
});
