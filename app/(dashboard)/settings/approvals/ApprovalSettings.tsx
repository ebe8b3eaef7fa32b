"use client";

/**
 * Settings → Approvals (docs/concepts.md#approvals, #freshness): the current policy version (activating another stored version makes approvals bound
 * to another version stale at once), the default approval lifetime, whether requesters may approve their own
 * requests, whether a retry after "not applied" reuses the approval its first go used (decision 0029), and the actions
 * the workspace marks approval-required (with their own lifetimes).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { useConfirm } from "@/components/ui/ConfirmDialog";
import { inputClass, primaryClass } from "../_components/kit";
import type { ApprovalSettingsView as View } from "@/lib/domain/approvals/settings";

/** What `POST /api/v1/policies/{version}/activate` answers. */
type Activation = { version: number; previous: number | null; changed: boolean; invalidated: unknown[] };

const hours = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : `${Math.round(s / 60)} min`);

export function ApprovalSettings({ initial, canManage }: { initial: View; canManage: boolean }) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: ["settings", "approvals"],
    queryFn: () => apiFetch<View>("/api/v1/settings/approvals"),
    initialData: initial,
  });
  const s = q.data;
  const [version, setVersion] = useState("");
  const [ttlHours, setTtlHours] = useState(String(initial.default_ttl_seconds / 3600));
  const [ruleAction, setRuleAction] = useState("");
  const [ruleTtl, setRuleTtl] = useState("");
  const [changed, setChanged] = useState<string | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: ["settings", "approvals"] });

  const setPolicy = useMutation({
    mutationFn: () =>
      apiFetch<Activation>(`/api/v1/policies/${encodeURIComponent(version.trim())}/activate`, { method: "POST" }),
    onSuccess: (r) => {
      setChanged(
        r.changed
          ? `Policy version ${r.previous ?? s.policy_version} → ${r.version}; ${r.invalidated.length} approval${r.invalidated.length === 1 ? "" : "s"} became stale.`
          : `Policy version ${r.version} is already the current one; nothing changed.`,
      );
      setVersion("");
      void refresh();
    },
  });
  const saveSettings = useMutation({
    mutationFn: (body: {
      default_ttl_seconds?: number;
      allow_self_approval?: boolean;
      retry_after_not_applied_reuses_approval?: boolean;
    }) => apiFetch("/api/v1/settings/approvals", { method: "PUT", body }),
    onSuccess: () => refresh(),
  });
  const saveRule = useMutation({
    mutationFn: () =>
      apiFetch(`/api/v1/settings/approval-rules/${encodeURIComponent(ruleAction.trim())}`, {
        method: "PUT",
        body: { requires_approval: true, ttl_seconds: ruleTtl.trim() ? Math.round(Number(ruleTtl) * 3600) : null },
      }),
    onSuccess: () => {
      setRuleAction("");
      setRuleTtl("");
      void refresh();
    },
  });
  const removeRule = useMutation({
    mutationFn: (a: string) =>
      apiFetch(`/api/v1/settings/approval-rules/${encodeURIComponent(a)}`, { method: "DELETE" }),
    onSuccess: () => refresh(),
  });
  const { confirm, dialog } = useConfirm();
  const err = setPolicy.error ?? saveSettings.error ?? saveRule.error ?? removeRule.error;

  return (
    <section id="approvals" aria-labelledby="approvals-h" className="rounded-lg border border-neutral-200 bg-white p-4">
      <h2 id="approvals-h" className="text-base font-semibold">
        Approvals
      </h2>
      {dialog}
      <p className="mb-3 text-sm text-neutral-600">
        Every approval is bound to the policy version current when it was given. Activating another stored version
        (stored on the{" "}
        <Link className="underline" href="/policies">
          Policies
        </Link>{" "}
        page) makes approvals bound to another one stale at once; approvers then re-approve them.
      </p>
      <p className="text-sm">
        Current policy version: <strong data-testid="current-policy-version">v{s.policy_version}</strong>
        {s.updated_by ? <span className="text-neutral-600"> (changed by {s.updated_by})</span> : null}
      </p>
      {canManage ? (
        <form
          className="mt-2 flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            void confirm({
              title: `Activate policy version ${version.trim()} (now ${s.policy_version})?`,
              body: "Approvals bound to another version become stale at once; approvers then re-approve them.",
              confirmLabel: `Activate version ${version.trim()}`,
            }).then((yes) => yes && setPolicy.mutate());
          }}
        >
          <label className="flex flex-col text-xs font-medium">
            Stored version to activate
            <input
              className={inputClass}
              value={version}
              onChange={(e) => setVersion(e.target.value)}
              placeholder="2"
              inputMode="numeric"
              required
              data-testid="policy-version-input"
            />
          </label>
          <button className={primaryClass} disabled={!version.trim() || setPolicy.isPending}>
            Activate policy version
          </button>
        </form>
      ) : (
        <p className="mt-1 text-sm text-neutral-600">Owners and admins change the policy version and these settings.</p>
      )}
      {changed ? (
        <p role="status" className="mt-2 text-sm text-emerald-800">
          {changed}
        </p>
      ) : null}

      <div className="mt-4 grid gap-4 md:grid-cols-2">
        <div>
          <h3 className="text-sm font-semibold">Lifetime and separation of duties</h3>
          <p className="text-sm">
            Approvals expire after <strong>{hours(s.default_ttl_seconds)}</strong> unless the action has its own
            lifetime.
          </p>
          <p className="text-sm" data-testid="self-approval-setting">
            {s.allow_self_approval
              ? "Requesters may approve their own requests: separation of duties is relaxed."
              : "A requester may not approve their own request (separation of duties)."}
          </p>
          <p className="text-sm" data-testid="retry-approval-setting">
            {s.retry_after_not_applied_reuses_approval
              ? "A retry after a write was found not applied goes under the approval its first attempt used."
              : "An approval authorizes one write: a retry after a write was found not applied needs a fresh approval."}
          </p>
          {canManage ? (
            <div className="mt-2 flex flex-wrap items-end gap-2">
              <label className="flex w-36 flex-col text-xs font-medium">
                Default lifetime (hours)
                <input
                  className={inputClass}
                  type="number"
                  min={1}
                  max={8760}
                  value={ttlHours}
                  onChange={(e) => setTtlHours(e.target.value)}
                />
              </label>
              <button
                type="button"
                className={primaryClass}
                disabled={saveSettings.isPending}
                onClick={() => saveSettings.mutate({ default_ttl_seconds: Math.round(Number(ttlHours) * 3600) })}
              >
                Save lifetime
              </button>
              <label className="flex items-center gap-2 text-sm">
                <input
                  type="checkbox"
                  checked={s.allow_self_approval}
                  onChange={(e) => saveSettings.mutate({ allow_self_approval: e.target.checked })}
                />
                Let requesters approve their own requests
              </label>
              <label className="flex items-center gap-2 text-sm">
                <input
                  type="checkbox"
                  checked={s.retry_after_not_applied_reuses_approval}
                  onChange={(e) => saveSettings.mutate({ retry_after_not_applied_reuses_approval: e.target.checked })}
                  data-testid="retry-approval-toggle"
                />
                Let a retry after “not applied” reuse the approval
              </label>
            </div>
          ) : null}
        </div>
        <div>
          <h3 className="text-sm font-semibold">Actions that need approval</h3>
          <p className="text-sm text-neutral-600">
            An intent for one of these actions needs a fresh approval, whatever the runtime says.
          </p>
          <ul className="mt-1 divide-y divide-neutral-100 text-sm" data-testid="approval-rules">
            {s.action_rules.length === 0 ? (
              <li className="py-1 text-neutral-600">None: only intents that say requires_approval wait.</li>
            ) : null}
            {s.action_rules.map((r) => (
              <li key={r.action} className="flex items-center gap-2 py-1">
                <code className="font-mono text-xs">{r.action}</code>
                <span className="text-xs text-neutral-600">
                  {r.requires_approval ? "needs approval" : "no approval"}
                  {r.ttl_seconds ? ` · expires after ${hours(r.ttl_seconds)}` : ""}
                </span>
                {canManage ? (
                  <button
                    type="button"
                    className="ml-auto rounded border border-neutral-300 px-2 py-0.5 text-xs"
                    onClick={() =>
                      void confirm({
                        title: `Stop requiring approval for ${r.action}?`,
                        body: "Writes of this action then go without an approval unless the runtime asks for one.",
                        confirmLabel: `Remove the rule for ${r.action}`,
                      }).then((yes) => yes && removeRule.mutate(r.action))
                    }
                  >
                    Remove
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
          {canManage ? (
            <form
              className="mt-2 flex flex-wrap items-end gap-2"
              onSubmit={(e) => {
                e.preventDefault();
                saveRule.mutate();
              }}
            >
              <label className="flex flex-col text-xs font-medium">
                Action
                <input
                  className={inputClass}
                  value={ruleAction}
                  onChange={(e) => setRuleAction(e.target.value)}
                  placeholder="publish_report"
                  required
                />
              </label>
              <label className="flex w-32 flex-col text-xs font-medium">
                Lifetime (hours)
                <input
                  className={inputClass}
                  type="number"
                  min={1}
                  max={8760}
                  value={ruleTtl}
                  onChange={(e) => setRuleTtl(e.target.value)}
                  placeholder="default"
                />
              </label>
              <button className={primaryClass} disabled={!ruleAction.trim() || saveRule.isPending}>
                Require approval
              </button>
            </form>
          ) : null}
        </div>
      </div>
      {err ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {err.message}
        </p>
      ) : null}
    </section>
  );
}
