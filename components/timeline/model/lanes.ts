/**
 * The timeline's four lanes, top to bottom: the plane each shows and its label.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/lanes.test.ts.
 */
import type { Plane } from "@/lib/contract/api";

/** One lane of the timeline: the plane it shows and its visible label. */
export type Lane = { plane: Plane; label: string };

/** The four lanes, top to bottom, in the same order as `PLANES` (session, environment, tools, vault). */
export const LANES: readonly Lane[] = [
  { plane: "session", label: "Session" },
  { plane: "environment", label: "Environment" },
  { plane: "tools", label: "Tools & egress" },
  { plane: "vault", label: "Vault" },
];

/** Visible label of a plane ("Tools & egress" for `tools`). */
export function planeLabel(plane: Plane): string {
  return LANES.find((l) => l.plane === plane)?.label ?? plane;
}

/** Index of the lane that shows a plane (0 = session … 3 = vault); -1 for a value outside the vocabulary. */
export function laneIndex(plane: Plane): number {
  return LANES.findIndex((l) => l.plane === plane);
}
