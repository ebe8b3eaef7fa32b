/**
 * Pure layout rules of the four-plane timeline, one file per idea: no React, no DOM; everything is a function of
 * events and numbers, unit-tested beside each part in tests/unit/timeline/.
 */
export * from "./lanes";
export * from "./events";
export * from "./outcome";
export * from "./rows";
export * from "./sandbox-bars";
export * from "./tool-calls";
export * from "./time-warp";
export * from "./domain";
export * from "./rules";
export * from "./bins";
export * from "./selection";
export * from "./summary";
export * from "./redactions";
