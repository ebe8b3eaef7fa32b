import type { Metadata } from "next";
import { getApprovalSettings } from "@/lib/domain/approvals/settings";
import { can } from "@/lib/domain/authz";
import { requirePageContext } from "@/lib/server/page-actor";
import { ApprovalSettings } from "./ApprovalSettings";

export const metadata: Metadata = { title: "Approvals · Settings" };

/** Settings → Approvals: the current policy version, lifetimes, self-approval and per-action rules. */
export default async function ApprovalSettingsPage() {
  const ctx = await requirePageContext();
  const settings = await getApprovalSettings(ctx);
  return <ApprovalSettings initial={settings} canManage={can(ctx.actor, "approvals.manage")} />;
}
