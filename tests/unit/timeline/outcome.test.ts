import { describe, expect, it } from "vitest";
import { classifyOutcome, markShape, relatedSideEffectName } from "../../../components/timeline/model/outcome";
import { sideEffect } from "./fixtures";

describe("markShape and classifyOutcome", () => {
  it("shapes marks by kind", () => {
    expect(markShape("side_effect.intent")).toBe("diamond");
    expect(markShape("credential.used")).toBe("square");
    expect(markShape("egress.denied")).toBe("triangle");
    expect(markShape("checkpoint.saved")).toBe("circle");
  });

  it("classifies denied, failed, unknown and ok", () => {
    const effects = { update_record: sideEffect("unknown"), publish_report: sideEffect("completed") };
    expect(classifyOutcome({ type: "egress.denied", attrs: {} })).toBe("denied");
    expect(classifyOutcome({ type: "credential.denied", attrs: {} })).toBe("denied");
    expect(classifyOutcome({ type: "tool.failed", attrs: {} })).toBe("failed");
    expect(classifyOutcome({ type: "egress.allowed", attrs: {} })).toBe("ok");
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { name: "update_record" } }, effects)).toBe("unknown");
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { side_effect: "update_record" } }, effects)).toBe(
      "unknown",
    );
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { name: "publish_report" } }, effects)).toBe("ok");
    // A receipt is not an intent; an intent without side-effect data is not guessed to be unknown.
    expect(classifyOutcome({ type: "side_effect.receipt", attrs: { name: "update_record" } }, effects)).toBe("ok");
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { name: "update_record" } })).toBe("ok");
    // Inherited object keys are not side effects.
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { name: "toString" } }, effects)).toBe("ok");
  });

  it("finds the side effect an event is about, only when known", () => {
    const effects = { publish_report: sideEffect("awaiting_approval") };
    expect(relatedSideEffectName({ type: "side_effect.receipt", attrs: { name: "publish_report" } }, effects)).toBe(
      "publish_report",
    );
    expect(
      relatedSideEffectName({ type: "approval.invalidated", attrs: { side_effect: "publish_report" } }, effects),
    ).toBe("publish_report");
    expect(relatedSideEffectName({ type: "side_effect.intent", attrs: { name: "other" } }, effects)).toBeNull();
    expect(relatedSideEffectName({ type: "tool.called", attrs: { name: "publish_report" } }, effects)).toBeNull();
  });
});
