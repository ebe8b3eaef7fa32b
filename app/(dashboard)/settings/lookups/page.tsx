import type { Metadata } from "next";
import { can } from "@/lib/domain/authz";
import { listLookups } from "@/lib/domain/settings/lookups";
import { requirePageContext } from "@/lib/server/page-actor";
import { LookupsSection } from "./LookupsSection";

export const metadata: Metadata = { title: "Lookups · Settings" };

/** Settings → Lookups: the endpoint per tool the reconcile dialog may ask. */
export default async function LookupsPage() {
  const ctx = await requirePageContext();
  const lookups = await listLookups(ctx);
  return <LookupsSection initial={lookups} canManage={can(ctx.actor, "lookups.manage")} />;
}
