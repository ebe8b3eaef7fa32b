"use client";

/**
 * Settings: runtime API keys (shown once, revocable), lookup endpoints per tool, principal revocation, members.
 * Every change goes through the API; the server checks the role.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { Role } from "@/db/schema/enums";
import { apiFetch } from "@/lib/client/api";
import { CopyButton } from "@/components/ui/CopyButton";
import { Time } from "@/components/ui/time";
import { MembersSection, type InvitationRow, type MemberRow } from "./MembersSection";

type KeyView = {
  id: string;
  name: string;
  display_prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};
type LookupView = { tool: string; url: string; timeout_ms: number; updated_at: string };
type PrincipalView = {
  principal: string;
  task_count: number;
  revoked: { reason: string; revoked_by: string; revoked_at: string } | null;
};

const input = "rounded-md border border-neutral-300 px-2 py-1.5 text-sm";
const primary = "rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50";

export function SettingsClient({
  initial,
  members,
  invitations,
  canManageMembers,
  userId,
  canManageKeys,
  canManageLookups,
  canManagePrincipals,
  canUnlockMembers,
  role,
}: {
  initial: { keys: KeyView[]; lookups: LookupView[]; principals: PrincipalView[] };
  members: MemberRow[];
  invitations: InvitationRow[];
  canManageMembers: boolean;
  userId: string;
  canManageKeys: boolean;
  canManageLookups: boolean;
  canManagePrincipals: boolean;
  canUnlockMembers: boolean;
  role: Role;
}) {
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-xl font-semibold">Settings</h1>
        <p className="text-sm text-neutral-600">Your role here: {role}. Changes are recorded in the audit log.</p>
      </div>
      <ApiKeys initial={initial.keys} canManage={canManageKeys} />
      <Lookups initial={initial.lookups} canManage={canManageLookups} />
      <Principals initial={initial.principals} canManage={canManagePrincipals} />
      <MembersSection
        initial={{ members, invitations }}
        canManage={canManageMembers}
        canUnlock={canUnlockMembers}
        me={{ userId, role }}
      />
    </div>
  );
}

/** Inline code in a section's hint (a header, a URL template). */
function Code({ children }: { children: React.ReactNode }) {
  return <code className="rounded bg-neutral-100 px-1 py-0.5 font-mono text-xs text-neutral-800">{children}</code>;
}

function Section({
  id,
  title,
  hint,
  children,
}: {
  id: string;
  title: string;
  hint: React.ReactNode;
  children: React.ReactNode;
}) {
  return (
    <section id={id} aria-labelledby={`${id}-h`} className="rounded-lg border border-neutral-200 bg-white p-4">
      <h2 id={`${id}-h`} className="text-base font-semibold">
        {title}
      </h2>
      <p className="mb-3 text-sm text-neutral-600">{hint}</p>
      {children}
    </section>
  );
}

function ErrorLine({ error }: { error: Error | null }) {
  return error ? (
    <p role="alert" className="mt-2 text-sm text-red-700">
      {error.message}
    </p>
  ) : null;
}

function ApiKeys({ initial, canManage }: { initial: KeyView[]; canManage: boolean }) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: ["settings", "keys"],
    queryFn: async () => (await apiFetch<{ keys: KeyView[] }>("/api/v1/settings/api-keys")).keys,
    initialData: initial,
  });
  const [name, setName] = useState("");
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
              className={input}
              value={name}
              onChange={(e) => setName(e.target.value)}
              placeholder="e.g. docs-agent runtime"
              required
            />
          </label>
          <button className={primary} disabled={!name.trim() || create.isPending}>
            Create key
          </button>
        </form>
      ) : (
        <p className="text-sm text-neutral-600">Owners and admins create and revoke keys.</p>
      )}
      <ErrorLine error={create.error} />
      {create.data ? (
        <div role="status" className="mt-3 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm">
          <p className="font-medium">Copy the key for “{create.data.name}” now: it will not be shown again.</p>
          <div className="mt-2 flex items-center gap-2">
            <code className="break-all rounded bg-white px-2 py-1 font-mono text-xs" data-testid="new-api-key">
              {create.data.key}
            </code>
            <CopyButton value={create.data.key} />
          </div>
        </div>
      ) : null}
      <div className="relative mt-3 overflow-x-auto">
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
                        onClick={() => {
                          if (window.confirm(`Revoke the key “${k.name}”? Runtimes using it get 401 from now on.`))
                            revoke.mutate(k.id);
                        }}
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
      </div>
      <ErrorLine error={revoke.error} />
    </Section>
  );
}

function Lookups({ initial, canManage }: { initial: LookupView[]; canManage: boolean }) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: ["settings", "lookups"],
    queryFn: async () => (await apiFetch<{ lookups: LookupView[] }>("/api/v1/settings/lookups")).lookups,
    initialData: initial,
  });
  const [tool, setTool] = useState("");
  const [url, setUrl] = useState("");
  const [timeout, setTimeoutMs] = useState("3000");
  const save = useMutation({
    mutationFn: () =>
      apiFetch(`/api/v1/settings/lookups/${encodeURIComponent(tool.trim())}`, {
        method: "PUT",
        body: { url: url.trim(), timeout_ms: Number(timeout) },
      }),
    onSuccess: () => {
      setTool("");
      setUrl("");
      void qc.invalidateQueries({ queryKey: ["settings", "lookups"] });
    },
  });
  const remove = useMutation({
    mutationFn: (t: string) => apiFetch(`/api/v1/settings/lookups/${encodeURIComponent(t)}`, { method: "DELETE" }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ["settings", "lookups"] }),
  });
  return (
    <Section
      id="lookups"
      title="Lookup endpoints"
      hint={
        <>
          When an effect&apos;s outcome is unknown, the server can ask the tool owner{" "}
          <Code>GET {"{url}"}?idempotency_key=…</Code> and show the answer to the responder. It never settles an effect
          by itself.
        </>
      }
    >
      {canManage ? (
        <form
          className="flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <label className="flex flex-col text-xs font-medium">
            Tool
            <input
              className={input}
              value={tool}
              onChange={(e) => setTool(e.target.value)}
              placeholder="update_record"
              required
            />
          </label>
          <label className="flex min-w-64 flex-1 flex-col text-xs font-medium">
            URL
            <input
              className={input}
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              placeholder="https://records.example.com/lookup"
              required
            />
          </label>
          <label className="flex w-28 flex-col text-xs font-medium">
            Timeout (ms)
            <input
              className={input}
              type="number"
              min={100}
              max={30000}
              value={timeout}
              onChange={(e) => setTimeoutMs(e.target.value)}
            />
          </label>
          <button className={primary} disabled={!tool.trim() || !url.trim() || save.isPending}>
            Save lookup
          </button>
        </form>
      ) : (
        <p className="text-sm text-neutral-600">Owners and admins register lookups.</p>
      )}
      <ErrorLine error={save.error} />
      <div className="relative mt-3 overflow-x-auto">
        <table className="w-full min-w-[36rem] text-left text-sm">
          <thead className="text-xs uppercase tracking-wide text-neutral-600">
            <tr>
              <th className="py-1">Tool</th>
              <th className="py-1">URL</th>
              <th className="py-1">Timeout</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {q.data.length === 0 ? (
              <tr>
                <td colSpan={4} className="py-3 text-neutral-600">
                  No lookups registered.
                </td>
              </tr>
            ) : (
              q.data.map((l) => (
                <tr key={l.tool} className="border-t border-neutral-100">
                  <td className="py-1.5 font-mono text-xs">{l.tool}</td>
                  <td className="py-1.5 font-mono text-xs break-all">{l.url}</td>
                  <td className="py-1.5 text-xs">{l.timeout_ms} ms</td>
                  <td className="py-1.5 text-right">
                    {canManage ? (
                      <button
                        type="button"
                        className="rounded border border-neutral-300 px-2 py-0.5 text-xs"
                        onClick={() => window.confirm(`Remove the lookup for ${l.tool}?`) && remove.mutate(l.tool)}
                      >
                        Remove
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
      <ErrorLine error={remove.error} />
    </Section>
  );
}

function Principals({ initial, canManage }: { initial: PrincipalView[]; canManage: boolean }) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: ["settings", "principals"],
    queryFn: async () => (await apiFetch<{ principals: PrincipalView[] }>("/api/v1/settings/principals")).principals,
    initialData: initial,
  });
  const [reason, setReason] = useState<Record<string, string>>({});
  const [missingReason, setMissingReason] = useState<string | null>(null);
  const revoke = useMutation({
    mutationFn: (p: string) =>
      apiFetch("/api/v1/settings/principals/revoke", {
        method: "POST",
        body: { principal: p, reason: reason[p] ?? "" },
      }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ["settings", "principals"] }),
  });
  const restore = useMutation({
    mutationFn: (p: string) =>
      apiFetch("/api/v1/settings/principals/restore", { method: "POST", body: { principal: p } }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ["settings", "principals"] }),
  });
  return (
    <Section
      id="principals"
      title="Principals"
      hint="Whom tasks act for. Revoking a principal stops every one of its tasks at the resume gate (principal revoked)."
    >
      <div className="relative overflow-x-auto">
        <table className="w-full min-w-[36rem] text-left text-sm">
          <thead className="text-xs uppercase tracking-wide text-neutral-600">
            <tr>
              <th className="py-1">Principal</th>
              <th className="py-1">Tasks</th>
              <th className="py-1">State</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {q.data.length === 0 ? (
              <tr>
                <td colSpan={4} className="py-3 text-neutral-600">
                  No principals yet: they appear with the first checkpointed task record.
                </td>
              </tr>
            ) : (
              q.data.map((p) => (
                <tr key={p.principal} className="border-t border-neutral-100 align-top">
                  <td className="py-1.5 font-mono text-xs break-all">{p.principal}</td>
                  <td className="py-1.5 text-xs">{p.task_count}</td>
                  <td className="py-1.5 text-xs">
                    {p.revoked ? (
                      <span className="text-red-800">
                        ✕ revoked by {p.revoked.revoked_by} · “{p.revoked.reason}”
                      </span>
                    ) : (
                      <span className="text-emerald-800">✔ active</span>
                    )}
                  </td>
                  <td className="py-1.5 text-right">
                    {canManage ? (
                      p.revoked ? (
                        <button
                          type="button"
                          className="rounded border border-neutral-300 px-2 py-0.5 text-xs"
                          onClick={() => restore.mutate(p.principal)}
                        >
                          Restore
                        </button>
                      ) : (
                        <span className="flex justify-end gap-1">
                          <label className="sr-only" htmlFor={`reason-${p.principal}`}>
                            Reason
                          </label>
                          <input
                            id={`reason-${p.principal}`}
                            className="rounded border border-neutral-300 px-1.5 py-0.5 text-xs"
                            placeholder="reason"
                            value={reason[p.principal] ?? ""}
                            onChange={(e) => setReason({ ...reason, [p.principal]: e.target.value })}
                          />
                          <button
                            type="button"
                            className="rounded border border-red-300 px-2 py-0.5 text-xs text-red-800"
                            onClick={() => {
                              if ((reason[p.principal] ?? "").trim().length < 3) {
                                setMissingReason(p.principal);
                                return;
                              }
                              setMissingReason(null);
                              if (
                                window.confirm(
                                  `Revoke ${p.principal}? Its ${p.task_count} task(s) will stop at the resume gate.`,
                                )
                              )
                                revoke.mutate(p.principal);
                            }}
                          >
                            Revoke
                          </button>
                        </span>
                      )
                    ) : null}
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
      {missingReason ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          Say why {missingReason} is revoked (at least 3 characters) before revoking.
        </p>
      ) : null}
      <ErrorLine error={revoke.error ?? restore.error} />
    </Section>
  );
}
