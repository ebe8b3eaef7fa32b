import type { Metadata } from "next";
import { can } from "@/lib/domain/authz";
import { listPrincipals } from "@/lib/domain/settings/principals";
import { listInvitations } from "@/lib/domain/tenancy/invitations";
import { listMembersForActor } from "@/lib/domain/tenancy/members";
import { requirePageContext } from "@/lib/server/page-actor";
import { MembersSection } from "./MembersSection";
import { PermissionsTable } from "./PermissionsTable";
import { PrincipalsSection } from "./PrincipalsSection";

export const metadata: Metadata = { title: "Members · Settings" };

/** Settings → Members: members and invitations, the principals tasks act for, and the permissions table. */
export default async function MembersPage() {
  const ctx = await requirePageContext();
  const { actor } = ctx;
  const [members, invitations, principals] = await Promise.all([
    listMembersForActor(ctx),
    listInvitations(ctx),
    listPrincipals(ctx),
  ]);
  return (
    <>
      <MembersSection
        initial={{ members, invitations }}
        canManage={can(actor, "members.manage")}
        canUnlock={can(actor, "members.unlock")}
        me={{ userId: actor.userId, role: actor.role }}
      />
      <PrincipalsSection initial={principals} canManage={can(actor, "principals.manage")} />
      <PermissionsTable />
    </>
  );
}
