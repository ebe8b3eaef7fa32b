"use client";

/**
 * Settings → Runtime API keys: create (shown once) with a scope and an expiry (decision 0044), list, revoke. Every
 * change goes through the API; the server checks the role, and enforces each key's scope and expiry on every request.
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
  expires_at: string | null;
  /** The expiry has come (read by the server when the list was made). */
  expired: boolean;
  scope: Scope;
  task_prefix: string | null;
};
type Scope = "full" | "runtime" | "read_only" | "task_prefix";

/** The scopes an owner chooses from, with what each lets a key do (lib/domain/tenancy/api-key-scope.ts). */
const SCOPES: Array<{ value: Scope; label: string; hint: string }> = [
  { value: "full", label: "Full", hint: "every route a runtime key may use" },
  {
    value: "runtime",
    label: "Runtime routes only",
    hint: "events, task records, intents, receipts, the gate, imports, traces",
  },
  { value: "read_only", label: "Read-only", hint: "GET requests only" },
  { value: "task_prefix", label: "One task prefix", hint: "only tasks whose id starts with the prefix" },
];
const EXPIRY_DAYS = [7, 30, 90, 365] as const;

/** How a key's scope reads in the list. */
function scopeText(k: KeyView): string {
  if (k.scope === "task_prefix") return `tasks “${k.task_prefix ?? ""}…”`;
  return SCOPES.find((x) => x.value === k.scope)?.label ?? k.scope;
}

/** The keys of this workspace, and for owners and admins the create form and Revoke. */
export function ApiKeysSection({ initial, canManage }: { initial: KeyView[]; canManage: boolean }) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: ["settings", "keys"],
    queryFn: async () => (await apiFetch<{ keys: KeyView[] }>("/api/v1/settings/api-keys")).keys,
    initialData: initial,
  });
  const [name, setName] = useState("");
  const [scope, setScope] = useState<Scope>("full");
  const [prefix, setPrefix] = useState("");
  const [expiry, setExpiry] = useState<string>("90");
  const { confirm, dialog } = useConfirm();
  const create = useMutation({
    mutationFn: () =>
      apiFetch<{ id: string; key: string; name: string }>("/api/v1/settings/api-keys", {
        method: "POST",
        body: {
          name,
          scope,
          ...(scope === "task_prefix" ? { task_prefix: prefix } : {}),
          expires_at: expiry === "never" ? null : new Date(Date.now() + Number(expiry) * 86_400_000).toISOString(),
        },
      }),
    onSuccess: () => {
      setName("");
      setPrefix("");
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
          <label className="flex flex-col text-xs font-medium">
            Scope
            <select
              className={inputClass}
              value={scope}
              onChange={(e) => setScope(e.target.value as Scope)}
              aria-describedby="api-key-scope-hint"
            >
              {SCOPES.map((x) => (
                <option key={x.value} value={x.value}>
                  {x.label}
                </option>
              ))}
            </select>
          </label>
          {scope === "task_prefix" ? (
            <label className="flex flex-col text-xs font-medium">
              Task id prefix
              <input
                className={`${inputClass} font-mono`}
                value={prefix}
                onChange={(e) => setPrefix(e.target.value)}
                placeholder="e.g. billing-"
                maxLength={100}
                required
              />
            </label>
          ) : null}
          <label className="flex flex-col text-xs font-medium">
            Expires
            <select className={inputClass} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
              {EXPIRY_DAYS.map((d) => (
                <option key={d} value={String(d)}>
                  in {d} days
                </option>
              ))}
              <option value="never">never</option>
            </select>
          </label>
          <button
            className={primaryClass}
            disabled={!name.trim() || (scope === "task_prefix" && !prefix.trim()) || create.isPending}
          >
            Create key
          </button>
        </form>
      ) : (
        <p className="text-sm text-neutral-600">Owners and admins create and revoke keys.</p>
      )}
      {canManage ? (
        <p id="api-key-scope-hint" className="mt-1 text-xs text-neutral-600">
          {SCOPES.find((x) => x.value === scope)?.label}: {SCOPES.find((x) => x.value === scope)?.hint}. A request
          outside the scope gets 403; a task outside the prefix 404; an expired key 401 <Code>api_key_expired</Code>.
        </p>
      ) : null}
      <ErrorLine error={create.error} />
      {create.data ? (
        <ShownOnce what={`the key for “${create.data.name}”`} secret={create.data.key} testId="new-api-key" />
      ) : null}
      <TableScroll label="API keys" className="mt-3">
        <table className="w-full min-w-[48rem] text-left text-sm">
          <thead className="text-xs uppercase tracking-wide text-neutral-600">
            <tr>
              <th className="py-1">Name</th>
              <th className="py-1">Key</th>
              <th className="py-1">Created</th>
              <th className="py-1">Last used</th>
              <th className="py-1">Scope</th>
              <th className="py-1">Expires</th>
              <th className="py-1">State</th>
              <th>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {q.data.length === 0 ? (
              <tr>
                <td colSpan={8} className="py-3 text-neutral-600">
                  No keys yet.
                </td>
              </tr>
            ) : (
              q.data.map((k) => (
                <tr
                  key={k.id}
                  className="border-t border-neutral-100 align-top"
                  data-testid="api-key-row"
                  data-scope={k.scope}
                >
                  <td className="py-1.5 break-all">{k.name}</td>
                  <td className="py-1.5 font-mono text-xs">{k.display_prefix}</td>
                  <td className="py-1.5 text-xs">
                    <Time iso={k.created_at} />
                  </td>
                  <td className="py-1.5 text-xs">
                    <Time iso={k.last_used_at} />
                  </td>
                  <td className="py-1.5 text-xs break-all" data-testid="api-key-scope">
                    {scopeText(k)}
                  </td>
                  <td className="py-1.5 text-xs" data-testid="api-key-expires">
                    {k.expires_at ? <Time iso={k.expires_at} /> : "never"}
                  </td>
                  <td className="py-1.5 text-xs">
                    {k.revoked_at ? (
                      <span className="text-red-800">✕ revoked</span>
                    ) : k.expired ? (
                      <span className="text-amber-900">✕ expired</span>
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
