/**
 * The one-screen picture of a map (decision 0046): the eight layers × custodian, decision and verification, each
 * layer linking to its row below. A table on wide screens; at phone width each layer becomes a two-line block (name
 * and custodians, then its decision and verification) so nothing scrolls sideways.
 */
import type { LayerRow } from "@/lib/contract/maps";
import { LAYER_GUIDE, MAP_LAYERS } from "@/lib/domain/maps/layers";
import { isPlaceholderName } from "@/lib/domain/maps/names";
import { DecisionBadge, VerificationBadge } from "./badges";

export function LayerGrid({ rows, linkRows = true }: { rows: readonly LayerRow[]; linkRows?: boolean }) {
  return (
    <section
      aria-labelledby="grid-h"
      className="rounded-lg border border-neutral-200 bg-white p-3 print:break-inside-avoid print:border-neutral-400"
      data-testid="layer-grid"
    >
      <h2 id="grid-h" className="text-sm font-semibold">
        The eight layers at a glance
      </h2>
      <table className="mt-2 w-full border-collapse text-sm">
        <thead className="max-sm:sr-only">
          <tr className="border-b border-neutral-200 text-left text-xs text-neutral-700">
            <th scope="col" className="py-1 pr-2 font-medium">
              Layer
            </th>
            <th scope="col" className="py-1 pr-2 font-medium">
              Custodian
            </th>
            <th scope="col" className="py-1 pr-2 font-medium">
              Decision
            </th>
            <th scope="col" className="py-1 font-medium">
              Verification
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const named = r.custodians.filter((c) => !isPlaceholderName(c.name));
            return (
              <tr
                key={r.layer}
                className="border-b border-neutral-100 last:border-0 max-sm:grid max-sm:grid-cols-[auto_1fr] max-sm:gap-x-2 max-sm:gap-y-1 max-sm:py-2"
                data-testid={`grid-${r.layer}`}
              >
                <th scope="row" className="py-1.5 pr-2 text-left align-top font-medium max-sm:col-span-2 max-sm:py-0">
                  <span className="text-neutral-600">{MAP_LAYERS.indexOf(r.layer) + 1} ·</span>{" "}
                  {linkRows ? (
                    <a href={`#layer-${r.layer}`} className="text-sky-800 underline-offset-2 hover:underline">
                      {LAYER_GUIDE[r.layer].label}
                    </a>
                  ) : (
                    LAYER_GUIDE[r.layer].label
                  )}
                </th>
                <td className="py-1.5 pr-2 align-top break-words max-sm:col-span-2 max-sm:py-0">
                  {named.length ? (
                    named.map((c) => `${c.name} (${c.organization})`).join("; ")
                  ) : (
                    <span className="text-neutral-600 italic">none named</span>
                  )}
                </td>
                <td className="py-1.5 pr-2 align-top max-sm:py-0">
                  <DecisionBadge value={r.decision} />
                </td>
                <td className="py-1.5 align-top max-sm:py-0">
                  <VerificationBadge value={r.verification} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
