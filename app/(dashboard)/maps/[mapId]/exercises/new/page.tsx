import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { can } from "@/lib/domain/authz";
import { DomainError } from "@/lib/domain/errors";
import { getMapView } from "@/lib/domain/maps/read";
import { requirePageContext } from "@/lib/server/page-actor";
import { NewExerciseForm } from "@/components/maps/NewExerciseForm";

type Props = { params: Promise<{ mapId: string }> };

export const metadata: Metadata = { title: "New interruption exercise" };

/** Starting an interruption exercise on a map: the interruption point and the layers it covers (owners, admins). */
export default async function NewExercisePage({ params }: Props) {
  const { mapId } = await params;
  const ctx = await requirePageContext();
  const { actor } = ctx;
  let map;
  try {
    map = await getMapView(ctx, { mapId });
  } catch (err) {
    if (err instanceof DomainError && err.code === "not_found") notFound();
    throw err;
  }
  return (
    <div className="mx-auto max-w-3xl space-y-4">
      <div>
        <p className="text-xs text-neutral-700">
          <Link href="/maps" className="underline">
            Custody maps
          </Link>{" "}
          /{" "}
          <Link href={`/maps/${map.id}`} className="underline">
            {map.title}
          </Link>
        </p>
        <h1 className="text-xl font-semibold">New interruption exercise</h1>
        <p className="text-sm text-neutral-700">
          Interrupt a disposable run — its own task, test credentials, reversible or simulated writes — at one point,
          and record what happened in six steps. Never test recovery on customer work.
        </p>
      </div>
      {can(actor, "maps.edit") ? (
        <NewExerciseForm mapId={map.id} />
      ) : (
        <p
          className="rounded-md border border-neutral-300 bg-neutral-50 p-3 text-sm text-neutral-800"
          data-testid="read-only-note"
        >
          Your role ({actor.role}) can read exercises; owners and admins record them.
        </p>
      )}
    </div>
  );
}
