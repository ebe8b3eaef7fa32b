import type { Metadata } from "next";
import { can } from "@/lib/domain/authz";
import { getNotificationSettings, listNotificationEndpoints } from "@/lib/domain/notifications/endpoints";
import { listWebhookSources } from "@/lib/domain/webhooks/sources";
import { requirePageContext } from "@/lib/server/page-actor";
import { NotificationsSection, WebhookSourcesSection } from "./WebhooksSections";

export const metadata: Metadata = { title: "Notifications · Settings" };

/** Settings → Notifications: webhook sources (in) and notification endpoints with their delivery log (out). */
export default async function NotificationsPage() {
  const ctx = await requirePageContext();
  const [sources, endpoints, settings] = await Promise.all([
    listWebhookSources(ctx),
    listNotificationEndpoints(ctx),
    getNotificationSettings(ctx),
  ]);
  return (
    <>
      <NotificationsSection
        initial={{ endpoints, allowPrivate: settings.allow_private_addresses }}
        canManage={can(ctx.actor, "notifications.manage")}
      />
      <WebhookSourcesSection initial={sources} canManage={can(ctx.actor, "webhooks.manage")} />
    </>
  );
}
