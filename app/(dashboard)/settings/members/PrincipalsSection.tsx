"use client";

/**
 * Settings → Members → Principals: whom tasks act for; revoking one stops its tasks at the resume gate.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { useConfirm } from "@/components/ui/ConfirmDialog";
import { ErrorLine, Section, TableScroll } from "../_components/kit";

type PrincipalView = {
  principal: string;
  task_count: number;
  revoked: { reason: string; revoked_by: string; revoked_at: string } | null;
};

/** Principals seen on task records, and for owners and admins Revoke (with a reason) and Restore. */
export function PrincipalsSection({ initial, canManage }: { initial: PrincipalView[]; canManage: boolean }) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: ["settings", "principals"],
    queryFn: async () => (await apiFetch<{ principals: PrincipalView[] }>("/api/v1/settings/principals")).principals,
    initialData: initial,
  });
  const [reason, setReason] = useState<Record<string, string>>({});
  const { confirm, dialog } = useConfirm();
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
      {dialog}
      <TableScroll label="Principals">
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
                              void confirm({
                                title: `Revoke ${p.principal}?`,
                                body: `Its ${p.task_count} task(s) will stop at the resume gate, and every intent for it is refused.`,
                                confirmLabel: `Revoke ${p.principal}`,
                              }).then((yes) => yes && revoke.mutate(p.principal));
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
      </TableScroll>
      {missingReason ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          Say why {missingReason} is revoked (at least 3 characters) before revoking.
        </p>
      ) : null}
      <ErrorLine error={revoke.error ?? restore.error} />
    </Section>
  );
}
