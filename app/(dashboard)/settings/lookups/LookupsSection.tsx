"use client";

/**
 * Settings → Lookups: the endpoint per tool that the reconcile dialog may ask about a write with an unknown outcome.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { useConfirm } from "@/components/ui/ConfirmDialog";
import { Code, ErrorLine, Section, inputClass, primaryClass, TableScroll } from "../_components/kit";

type LookupView = { tool: string; url: string; timeout_ms: number; updated_at: string };

/** Registered lookups, and for owners and admins the form and Remove. */
export function LookupsSection({ initial, canManage }: { initial: LookupView[]; canManage: boolean }) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: ["settings", "lookups"],
    queryFn: async () => (await apiFetch<{ lookups: LookupView[] }>("/api/v1/settings/lookups")).lookups,
    initialData: initial,
  });
  const [tool, setTool] = useState("");
  const { confirm, dialog } = useConfirm();
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
      {dialog}
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
              className={inputClass}
              value={tool}
              onChange={(e) => setTool(e.target.value)}
              placeholder="update_record"
              required
            />
          </label>
          <label className="flex min-w-64 flex-1 flex-col text-xs font-medium">
            URL
            <input
              className={inputClass}
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              placeholder="https://records.example.com/lookup"
              required
            />
          </label>
          <label className="flex w-28 flex-col text-xs font-medium">
            Timeout (ms)
            <input
              className={inputClass}
              type="number"
              min={100}
              max={30000}
              value={timeout}
              onChange={(e) => setTimeoutMs(e.target.value)}
            />
          </label>
          <button className={primaryClass} disabled={!tool.trim() || !url.trim() || save.isPending}>
            Save lookup
          </button>
        </form>
      ) : (
        <p className="text-sm text-neutral-600">Owners and admins register lookups.</p>
      )}
      <ErrorLine error={save.error} />
      <TableScroll label="Lookups" className="mt-3">
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
                        onClick={() =>
                          void confirm({
                            title: `Remove the lookup for ${l.tool}?`,
                            body: "The reconcile dialog can then no longer ask the tool owner about this tool's writes.",
                            confirmLabel: `Remove lookup for ${l.tool}`,
                          }).then((yes) => yes && remove.mutate(l.tool))
                        }
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
      </TableScroll>
      <ErrorLine error={remove.error} />
    </Section>
  );
}
