import { requirePageActor } from "@/lib/server/page-actor";
import { SettingsNav } from "./_components/SettingsNav";

/**
 * Settings: a heading, the caller's role, and the section nav above each section's own page (/settings/members,
 * /settings/api-keys, /settings/approvals, /settings/lookups, /settings/notifications, /settings/export).
 */
export default async function SettingsLayout({ children }: { children: React.ReactNode }) {
  const actor = await requirePageActor();
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-xl font-semibold">Settings</h1>
        <p className="text-sm text-neutral-600">Your role here: {actor.role}. Changes are recorded in the audit log.</p>
      </div>
      <SettingsNav />
      <div className="space-y-6">{children}</div>
    </div>
  );
}
