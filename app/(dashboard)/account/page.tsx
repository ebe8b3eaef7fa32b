import type { Metadata } from "next";
import { dbFor } from "@/db";
import { accountFor } from "@/lib/domain/tenancy/account";
import { MIN_PASSWORD_LENGTH } from "@/lib/domain/tenancy/passwords";
import { requirePageActor } from "@/lib/server/page-actor";
import { AccountClient } from "./AccountClient";

export const metadata: Metadata = { title: "Your account" };

/** The signed-in person: their workspaces (switch between them) and their password. */
export default async function AccountPage() {
  const actor = await requirePageActor();
  const account = await accountFor(await dbFor(actor), actor);
  return <AccountClient account={account} minLength={MIN_PASSWORD_LENGTH} />;
}
