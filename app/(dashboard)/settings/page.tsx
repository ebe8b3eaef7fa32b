import type { Metadata } from "next";
import { getDb } from "@/db";
import { can } from "@/lib/domain/authz";
import { listLookups } from "@/lib/domain/settings/lookups";
import { listPrincipals } from "@/lib/domain/settings/principals";
import { listApiKeys } from "@/lib/domain/tenancy/api-keys";
import { listMembersForActor } from "@/lib/domain/tenancy/members";
import { requirePageActor } from "@/lib/server/page-actor";
import { SettingsClient } from "./SettingsClient";

export const metadata: Metadata = { title: "Settings" };

/** Members and roles (with sign-in locks), runtime API keys, lookup endpoints per tool, principal revocation. */
export default async function SettingsPage() {
  const actor = await requirePageActor();
  const db = await getDb();
  const [keysList, lookups, principals, members] = await Promise.all([
    listApiKeys(db, actor),
    listLookups(db, actor),
    listPrincipals(db, actor),
    listMembersForActor(db, actor),
  ]);
  return (
    <SettingsClient
      initial={{ keys: keysList, lookups, principals }}
      members={members}
      canManageKeys={can(actor, "api_keys.manage")}
      canManageLookups={can(actor, "lookups.manage")}
      canManagePrincipals={can(actor, "principals.manage")}
      canUnlockMembers={can(actor, "members.unlock")}
      role={actor.role}
    />
  );
}
