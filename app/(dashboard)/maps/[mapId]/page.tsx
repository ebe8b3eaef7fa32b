import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { can } from "@/lib/domain/authz";
import { DomainError } from "@/lib/domain/errors";
import { listExercisesForActor } from "@/lib/domain/exercises/read";
import { getMapView } from "@/lib/domain/maps/read";
import { listMembersForActor } from "@/lib/domain/tenancy/members";
import { requirePageContext } from "@/lib/server/page-actor";
import { MapWorksheet } from "@/components/maps/MapWorksheet";

type Props = { params: Promise<{ mapId: string }> };

export const metadata: Metadata = { title: "Custody map" };

/**
 * One custody map: the adoption summary and its sign-off, the grid of the eight layers, the eight-layer worksheet
 * (autosaved for owners and admins, read-only for everyone else) with each layer's assignee, evidence items and
 * comments, its exercises, and its published versions with a comparison. An unknown id (or another tenant's) answers
 * 404 with not-found.tsx, looked up before anything streams.
 */
export default async function MapPage({ params }: Props) {
  const { mapId } = await params;
  const ctx = await requirePageContext();
  const { actor } = ctx;
  let map;
  let exercises;
  try {
    map = await getMapView(ctx, { mapId });
    exercises = (await listExercisesForActor(ctx, { mapId })).exercises;
  } catch (err) {
    if (err instanceof DomainError && err.code === "not_found") notFound();
    throw err;
  }
  const canEdit = can(actor, "maps.edit");
  const members = canEdit ? (await listMembersForActor(ctx)).filter((m) => !m.revoked).map((m) => m.email) : [];
  return (
    <MapWorksheet
      initial={map}
      exercises={exercises}
      canEdit={canEdit}
      canSignOff={can(actor, "maps.signoff")}
      canComment={can(actor, "maps.comment")}
      role={actor.role}
      me={actor.email}
      members={members}
    />
  );
}
