import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { can } from "@/lib/domain/authz";
import { DomainError } from "@/lib/domain/errors";
import { getExerciseView } from "@/lib/domain/exercises/read";
import { listLookups } from "@/lib/domain/settings/lookups";
import { RECORDS_TOOL } from "@/lib/demo/interruption-points";
import { requirePageContext } from "@/lib/server/page-actor";
import { withSigningKey } from "@/lib/server/verb-context";
import { ExerciseEditor } from "@/components/maps/ExerciseEditor";

type Props = { params: Promise<{ mapId: string; exerciseId: string }> };

export const metadata: Metadata = { title: "Interruption exercise" };

/**
 * One interruption exercise: the point, the command that runs the demo runtime to that point (writing to the records
 * service this workspace's lookup of `update_record` asks, or saying plainly that the lookup cannot see it), the six steps with
 * evidence (tasks of this workspace picked by search, with what the product knows about them as suggestions), and
 * the outcome. Completing it sets the covered layers' verification on the map.
 */
export default async function ExercisePage({ params }: Props) {
  const { mapId, exerciseId } = await params;
  const ctx = await requirePageContext();
  const { actor } = ctx;
  let view;
  try {
    view = await getExerciseView(withSigningKey(ctx), { mapId, exerciseId });
  } catch (err) {
    if (err instanceof DomainError && err.code === "not_found") notFound();
    throw err;
  }
  // The lookup "Look up by idempotency key" asks for the demo runtime's writes: its command must write there.
  const lookup = (await listLookups(ctx)).find((l) => l.tool === RECORDS_TOOL)?.url ?? null;
  return <ExerciseEditor initial={view} canEdit={can(actor, "maps.edit")} role={actor.role} recordsLookup={lookup} />;
}
