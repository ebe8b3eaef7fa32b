/**
 * The timeline overview as the task page ships it from the server to the browser: the same as the API's
 * (`GET …/timeline/overview`), with the bins packed into one array of numbers. A long run's ≈ 1,000 bins as objects
 * with ISO times were ≈ 105 KB of the page's payload; packed they are a third of that, and the browser wants epoch
 * milliseconds anyway. Pure functions: the server packs, the browser unpacks.
 */
import type { Plane, TimelineOverview } from "./api";

/** Lane order of the packed index (the schema's order; not imported from db/, which would bring Drizzle to the browser). */
const PLANES: readonly Plane[] = ["session", "environment", "tools", "vault"];

/** Numbers per packed bin: lane index, first and last event time (epoch ms), count, failed, denied. */
const STRIDE = 6;

/** {@link TimelineOverview} with `bins` packed by {@link packOverview}. */
export type PageOverview = Omit<TimelineOverview, "bins"> & { bins: number[] };

/** One bin as the timeline draws it (epoch ms). */
export type UnpackedBin = { plane: Plane; first: number; last: number; count: number; failed: number; denied: number };

/** Packs an overview's bins (input: the API's overview; output: the page's). */
export function packOverview(o: TimelineOverview): PageOverview {
  const bins = new Array<number>(o.bins.length * STRIDE);
  o.bins.forEach((b, i) => {
    const at = i * STRIDE;
    bins[at] = PLANES.indexOf(b.plane);
    bins[at + 1] = Date.parse(b.first);
    bins[at + 2] = Date.parse(b.last);
    bins[at + 3] = b.count;
    bins[at + 4] = b.failed;
    bins[at + 5] = b.denied;
  });
  return { ...o, bins };
}

/** The bins of a packed overview, in their order. */
export function unpackBins(bins: readonly number[]): UnpackedBin[] {
  const out: UnpackedBin[] = [];
  for (let at = 0; at + STRIDE <= bins.length; at += STRIDE) {
    out.push({
      plane: PLANES[bins[at]!] ?? "session",
      first: bins[at + 1]!,
      last: bins[at + 2]!,
      count: bins[at + 3]!,
      failed: bins[at + 4]!,
      denied: bins[at + 5]!,
    });
  }
  return out;
}
