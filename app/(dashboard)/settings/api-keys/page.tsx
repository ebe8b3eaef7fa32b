import type { Metadata } from "next";
import { can } from "@/lib/domain/authz";
import { listApiKeys } from "@/lib/domain/tenancy/api-keys";
import { requirePageContext } from "@/lib/server/page-actor";
import { ApiKeysSection } from "./ApiKeysSection";

export const metadata: Metadata = { title: "Runtime API keys · Settings" };

/** Settings → Runtime API keys. */
export default async function ApiKeysPage() {
  const ctx = await requirePageContext();
  const keys = await listApiKeys(ctx);
  return <ApiKeysSection initial={keys} canManage={can(ctx.actor, "api_keys.manage")} />;
}
