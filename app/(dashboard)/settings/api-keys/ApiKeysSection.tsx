"use client";

/**
 * Settings → Runtime API keys: create (shown once), list, revoke. Every change goes through the API; the server checks
 * the role.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { useConfirm } from "@/components/ui/ConfirmDialog";
import { Time } from "@/components/ui/time";
import { Code, ErrorLine, Section, ShownOnce, inputClass, primaryClass, TableScroll } from "../_components/kit";

type KeyView = {
  id: string;
  name: string;
  display_prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};

/** The keys of this workspace, and for owners and admins the create form and Revoke. */
export function ApiKeysSection({ initial, canManage }: { initial: KeyView[]; canManage: boolean }) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: ["settings", "keys"],
    queryFn: async () => (await apiFetch<{ keys: KeyView[] }>("/api/v1/settings/api-keys")).keys,
    initialData: initial,
  });
  const [name, setName] = useState("");
  const { confirm, dialog } = useConfirm();
  const create = useMutation({
    mutationFn: () =>
      apiFetch<{ id: string; key: string; name: string }>("/api/v1/settings/api-keys", {
        method: "POST",
        body: { name },
      }),
    onSuccess: () => {
      setName("");
      void qc.invalidateQueries({ queryKey: ["settings", "keys"] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => apiFetch(`/api/v1/settings/api-keys/${id}/revoke`, { method: "POST", body: {} }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ["settings", "keys"] }),
  });
  return (
    <Section
      id="api-keys"
      title="Runtime API keys"
      hint={
        <>
          Agent runtimes authenticate with a key sent as <Code>Authorization: Bearer &lt;key&gt;</Code>. A key is shown
          once; only its hash is stored.
        </>
      }
    >
      {dialog}
      {canManage ? (
        <form
          className="flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <label className="flex flex-col text-xs font-medium">
            Name
            <input
              className={inputClass}
              value={name}
              onChange={(e) => setName(e.target.value)}
              placeholder="e.g. docs-agent runtime"
              required
            />
          </label>
          <button className={primaryClass} disabled={!name.trim() || create.isPending}>
            Create key
          </button>
        </form>
      ) : (
        <p className="text-sm text-neutral-600">Owners and admins create and revoke keys.</p>
      )}
      <ErrorLine error={create.error} />
      {create.data ? (
        <ShownOnce what={`the key for “${create.data.name}”`} secret={create.data.key} testId="new-api-key" />
      ) : null}
      <TableScroll label="API keys" className="mt-3">
        <table className="w-full min-w-[36rem] text-left text-sm">
          <thead className="text-xs uppercase tracking-wide text-neutral-600">
            <tr>
              <th className="py-1">Name</th>
              <th className="py-1">Key</th>
              <th className="py-1">Created</th>
              <th className="py-1">Last used</th>
              <th className="py-1">State</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {q.data.length === 0 ? (
              <tr>
                <td colSpan={6} className="py-3 text-neutral-600">
                  No keys yet.
                </td>
              </tr>
            ) : (
              q.data.map((k) => (
                <tr key={k.id} className="border-t border-neutral-100">
                  <td className="py-1.5">{k.name}</td>
                  <td className="py-1.5 font-mono text-xs">{k.display_prefix}</td>
                  <td className="py-1.5 text-xs">
                    <Time iso={k.created_at} />
                  </td>
                  <td className="py-1.5 text-xs">
                    <Time iso={k.last_used_at} />
                  </td>
                  <td className="py-1.5 text-xs">
                    {k.revoked_at ? (
                      <span className="text-red-800">✕ revoked</span>
                    ) : (
                      <span className="text-emerald-800">✔ active</span>
                    )}
                  </td>
                  <td className="py-1.5 text-right">
                    {canManage && !k.revoked_at ? (
                      <button
                        type="button"
                        className="rounded border border-red-300 px-2 py-0.5 text-xs text-red-800 hover:bg-red-50"
                        onClick={() =>
                          void confirm({
                            title: `Revoke the key “${k.name}”?`,
                            body: "Runtimes using it get 401 from the next request on. This cannot be undone.",
                            confirmLabel: `Revoke ${k.name}`,
                          }).then((yes) => yes && revoke.mutate(k.id))
                        }
                      >
                        Revoke
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </TableScroll>
      <ErrorLine error={revoke.error} />
    </Section>
  );
}
