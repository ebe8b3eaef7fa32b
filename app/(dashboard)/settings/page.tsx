import type { Metadata } from "next";
import Link from "next/link";
import { can } from "@/lib/domain/authz";
import { listLookups } from "@/lib/domain/settings/lookups";
import { listPrincipals } from "@/lib/domain/settings/principals";
import { listApiKeys } from "@/lib/domain/tenancy/api-keys";
import { listInvitations } from "@/lib/domain/tenancy/invitations";
import { listMembersForActor } from "@/lib/domain/tenancy/members";
import { requirePageContext } from "@/lib/server/page-actor";
import { PermissionsTable } from "./PermissionsTable";
import { SettingsClient } from "./SettingsClient";
import { ApprovalSettings } from "./ApprovalSettings";
import { getApprovalSettings } from "@/lib/domain/approvals/settings";
import { getNotificationSettings, listNotificationEndpoints } from "@/lib/domain/notifications/endpoints";
import { listWebhookSources } from "@/lib/domain/webhooks/sources";
import { NotificationsSection, WebhookSourcesSection } from "./WebhooksSections";

export const metadata: Metadata = { title: "Settings" };

/**
 * Runtime API keys, lookup endpoints per tool, principal revocation, members (invitations, roles, removal, sign-in
 * locks), approvals, webhook sources and notification endpoints (decision 0040), and the permissions table, read-only.
 */
export default async function SettingsPage() {
  const ctx = await requirePageContext();
  const { actor } = ctx;
  const [
    keysList,
    lookups,
    principals,
    members,
    invitations,
    approvalSettings,
    webhookSources,
    endpoints,
    notificationSettings,
  ] = await Promise.all([
    listApiKeys(ctx),
    listLookups(ctx),
    listPrincipals(ctx),
    listMembersForActor(ctx),
    listInvitations(ctx),
    getApprovalSettings(ctx),
    listWebhookSources(ctx),
    listNotificationEndpoints(ctx),
    getNotificationSettings(ctx),
  ]);
  return (
    <div className="space-y-6">
      <SettingsClient
        initial={{ keys: keysList, lookups, principals }}
        members={members}
        invitations={invitations}
        canManageMembers={can(actor, "members.manage")}
        userId={actor.userId}
        canManageKeys={can(actor, "api_keys.manage")}
        canManageLookups={can(actor, "lookups.manage")}
        canManagePrincipals={can(actor, "principals.manage")}
        canUnlockMembers={can(actor, "members.unlock")}
        role={actor.role}
      />
      <ApprovalSettings initial={approvalSettings} canManage={can(actor, "approvals.manage")} />
      <WebhookSourcesSection initial={webhookSources} canManage={can(actor, "webhooks.manage")} />
      <NotificationsSection
        initial={{ endpoints, allowPrivate: notificationSettings.allow_private_addresses }}
        canManage={can(actor, "notifications.manage")}
      />
      <section aria-labelledby="export-link-h" className="rounded-lg border border-neutral-200 bg-white p-3">
        <h2 id="export-link-h" className="text-sm font-semibold">
          Export
        </h2>
        <p className="mt-1 text-sm">
          Leave with everything: one signed archive of the workspace that verifies offline.{" "}
          <Link href="/settings/export" className="text-sky-800 underline" data-testid="settings-export-link">
            Export the workspace
          </Link>
        </p>
      </section>
      <PermissionsTable />
    </div>
  );
}
