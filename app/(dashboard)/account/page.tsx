import type { Metadata } from "next";
import { accountFor } from "@/lib/domain/tenancy/account";
import { MIN_PASSWORD_LENGTH } from "@/lib/domain/tenancy/passwords";
import { requirePageContext } from "@/lib/server/page-actor";
import { AccountClient } from "./AccountClient";

export const metadata: Metadata = { title: "Your account" };

/** The signed-in person: their workspaces (switch between them) and their password. */
export default async function AccountPage() {
  const ctx = await requirePageContext();
  const account = await accountFor(ctx);
  return <AccountClient account={account} minLength={MIN_PASSWORD_LENGTH} />;
}
