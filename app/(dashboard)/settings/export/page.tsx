import type { Metadata } from "next";
import { can } from "@/lib/domain/authz";
import { requirePageContext } from "@/lib/server/page-actor";
import { ExportClient } from "./ExportClient";

export const metadata: Metadata = { title: "Export · Settings" };

/**
 * Settings → Export: downloads the workspace bundle (`GET /api/v1/export`, decision 0038) with its progress for owners
 * and admins; other roles read what it is and who may take it.
 */
export default async function ExportPage() {
  const { actor } = await requirePageContext();
  return (
    <div className="max-w-3xl space-y-4">
      <h2 className="text-base font-semibold">Export the workspace</h2>
      <p className="text-sm text-neutral-800">
        One signed archive (<code>.tar.gz</code>) with every task created in the range — each as its task bundle — the
        custody maps with all their versions and exercises, the policy versions, the approval settings, the members (no
        password hashes, no key hashes) and the whole audit chain. Check it anywhere, without this server, with{" "}
        <code>npx run-custody verify &lt;bundle.tar.gz&gt;</code>; its <code>inventory.md</code> says what each file is
        and what the bundle cannot carry.
      </p>
      {actor.readOnly ? (
        <p className="rounded-md border border-amber-300 bg-amber-50 p-2 text-sm" data-testid="read-only-note">
          This workspace holds an imported bundle and is read-only; its export carries the records as they were
          imported.
        </p>
      ) : null}
      {can(actor, "workspace.export") ? (
        <ExportClient />
      ) : (
        <p className="text-sm" data-testid="export-not-allowed">
          Your role ({actor.role}) cannot export the workspace; owners and admins can.
        </p>
      )}
    </div>
  );
}
