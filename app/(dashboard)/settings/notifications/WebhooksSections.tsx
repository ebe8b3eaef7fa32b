"use client";

/**
 * Settings → Webhooks and Settings → Notifications (decision 0040): sources that report what happened to a write
 * (Standard Webhooks in), endpoints that hear about what needs a person (Standard Webhooks out), and the delivery log.
 * Secrets are shown once; every change goes through the API, which checks the role.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { useConfirm } from "@/components/ui/ConfirmDialog";
import { Time } from "@/components/ui/time";
import { ErrorLine, Section, ShownOnce, inputClass, primaryClass, smallClass, TableScroll } from "../_components/kit";

type SourceView = {
  name: string;
  trusted_actions: string[];
  secrets: Array<{ id: string; created_at: string }>;
  created_at: string;
};
type EndpointView = { id: string; url: string; events: string[]; format: "standard" | "slack"; created_at: string };
type DeliveryView = {
  id: string;
  endpoint_id: string;
  event: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string | null;
};

/** The events an endpoint may want (lib/domain/notifications/outbox.ts). */
const EVENTS = [
  "approval.requested",
  "approval.stale",
  "side_effect.unknown",
  "gate.stopped",
  "task.needs_attention",
  "policy.activated",
  "egress.denied",
  "egress.drift",
] as const;

/** Settings → Webhooks. */
export function WebhookSourcesSection({ initial, canManage }: { initial: SourceView[]; canManage: boolean }) {
  const qc = useQueryClient();
  const key = ["settings", "webhook-sources"];
  const q = useQuery({
    queryKey: key,
    queryFn: async () => (await apiFetch<{ sources: SourceView[] }>("/api/v1/settings/webhook-sources")).sources,
    initialData: initial,
  });
  const [name, setName] = useState("");
  const [actions, setActions] = useState("");
  const [shown, setShown] = useState<{ label: string; secret: string } | null>(null);
  const { confirm, dialog } = useConfirm();
  const refresh = () => qc.invalidateQueries({ queryKey: key });
  const create = useMutation({
    mutationFn: () =>
      apiFetch<{ name: string; secret: string }>("/api/v1/settings/webhook-sources", {
        method: "POST",
        body: {
          name: name.trim(),
          trusted_actions: actions
            .split(",")
            .map((a) => a.trim())
            .filter(Boolean),
        },
      }),
    onSuccess: (d) => {
      setShown({ label: d.name, secret: d.secret });
      setName("");
      setActions("");
      void refresh();
    },
  });
  const rotate = useMutation({
    mutationFn: (source: string) =>
      apiFetch<{ name: string; secret: string }>(`/api/v1/settings/webhook-sources/${source}/secrets`, {
        method: "POST",
        body: {},
      }),
    onSuccess: (d) => {
      setShown({ label: `${d.name} (new)`, secret: d.secret });
      void refresh();
    },
  });
  const remove = useMutation({
    mutationFn: ({ source, id }: { source: string; id: string }) =>
      apiFetch(`/api/v1/settings/webhook-sources/${source}/secrets/${id}`, { method: "DELETE" }),
    onSuccess: () => refresh(),
  });
  return (
    <Section
      id="webhooks"
      title="Webhooks"
      hint={
        <>
          Tool owners&apos; systems report what happened to a write to <code>/api/v1/webhooks/&lt;name&gt;</code>,
          signed with Standard Webhooks. A source trusted for an action settles its unknown writes; any other report
          pre-fills the reconcile dialog.
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
            Source name
            <input
              className={inputClass}
              value={name}
              onChange={(e) => setName(e.target.value)}
              placeholder="billing"
              required
            />
          </label>
          <label className="flex flex-col text-xs font-medium">
            Trusted for actions (comma-separated)
            <input
              className={inputClass}
              value={actions}
              onChange={(e) => setActions(e.target.value)}
              placeholder="refunds.create"
            />
          </label>
          <button className={primaryClass} disabled={!name.trim() || create.isPending}>
            Add source
          </button>
        </form>
      ) : (
        <p className="text-sm text-neutral-600">Owners and admins add sources and rotate their secrets.</p>
      )}
      <ErrorLine error={create.error ?? rotate.error ?? remove.error} />
      {shown ? (
        <ShownOnce what={`the signing secret for ${shown.label}`} secret={shown.secret} testId="new-webhook-secret" />
      ) : null}
      <TableScroll label="Webhook sources" className="mt-3">
        <table className="w-full min-w-[36rem] text-left text-sm">
          <thead className="text-xs uppercase tracking-wide text-neutral-600">
            <tr>
              <th className="py-1">Source</th>
              <th className="py-1">Trusted for</th>
              <th className="py-1">Secrets</th>
              <th className="py-1">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {q.data.length === 0 ? (
              <tr>
                <td colSpan={4} className="py-3 text-neutral-600">
                  No webhook sources yet.
                </td>
              </tr>
            ) : (
              q.data.map((s) => (
                <tr key={s.name} className="border-t border-neutral-100 align-top">
                  <td className="py-1.5 font-mono text-xs">{s.name}</td>
                  <td className="py-1.5 text-xs">{s.trusted_actions.length ? s.trusted_actions.join(", ") : "—"}</td>
                  <td className="py-1.5 text-xs">
                    <ul>
                      {s.secrets.map((k) => (
                        <li key={k.id} className="flex items-center gap-2">
                          <span>
                            created <Time iso={k.created_at} />
                          </span>
                          {canManage && s.secrets.length > 1 ? (
                            <button
                              type="button"
                              className={smallClass}
                              onClick={() =>
                                void confirm({
                                  title: `Remove a signing secret of ${s.name}?`,
                                  body: `Reports signed with the secret created ${k.created_at} are refused from now on.`,
                                  confirmLabel: "Remove secret",
                                }).then((yes) => yes && remove.mutate({ source: s.name, id: k.id }))
                              }
                            >
                              Remove<span className="sr-only"> the secret created {k.created_at}</span>
                            </button>
                          ) : null}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td className="py-1.5 text-right">
                    {canManage && s.secrets.length < 2 ? (
                      <button type="button" className={smallClass} onClick={() => rotate.mutate(s.name)}>
                        Rotate secret<span className="sr-only"> of {s.name}</span>
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </TableScroll>
    </Section>
  );
}

/** Settings → Notifications. */
export function NotificationsSection({
  initial,
  canManage,
}: {
  initial: { endpoints: EndpointView[]; allowPrivate: boolean };
  canManage: boolean;
}) {
  const qc = useQueryClient();
  const endpoints = useQuery({
    queryKey: ["settings", "notification-endpoints"],
    queryFn: async () =>
      (await apiFetch<{ endpoints: EndpointView[] }>("/api/v1/settings/notification-endpoints")).endpoints,
    initialData: initial.endpoints,
  });
  const deliveries = useQuery({
    queryKey: ["settings", "notification-deliveries"],
    queryFn: async () =>
      (await apiFetch<{ deliveries: DeliveryView[] }>("/api/v1/settings/notification-deliveries?limit=50")).deliveries,
    refetchInterval: 5000,
  });
  const [url, setUrl] = useState("");
  const [format, setFormat] = useState<"standard" | "slack">("standard");
  const [events, setEvents] = useState<string[]>(["approval.requested", "side_effect.unknown"]);
  const [allowPrivate, setAllowPrivate] = useState(initial.allowPrivate);
  const [shown, setShown] = useState<{ label: string; secret: string } | null>(null);
  const { confirm, dialog } = useConfirm();
  const create = useMutation({
    mutationFn: () =>
      apiFetch<{ id: string; url: string; secret: string }>("/api/v1/settings/notification-endpoints", {
        method: "POST",
        body: { url: url.trim(), events, format },
      }),
    onSuccess: (d) => {
      setShown({ label: d.url, secret: d.secret });
      setUrl("");
      void qc.invalidateQueries({ queryKey: ["settings", "notification-endpoints"] });
    },
  });
  const setPrivate = useMutation({
    mutationFn: (allow: boolean) =>
      apiFetch<{ allow_private_addresses: boolean }>("/api/v1/settings/notifications", {
        method: "PUT",
        body: { allow_private_addresses: allow },
      }),
    onSuccess: (d) => setAllowPrivate(d.allow_private_addresses),
  });
  const remove = useMutation({
    mutationFn: (id: string) => apiFetch(`/api/v1/settings/notification-endpoints/${id}`, { method: "DELETE" }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ["settings", "notification-endpoints"] }),
  });
  const resend = useMutation({
    mutationFn: (id: string) =>
      apiFetch(`/api/v1/settings/notification-deliveries/${id}/resend`, { method: "POST", body: {} }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ["settings", "notification-deliveries"] }),
  });
  return (
    <Section
      id="notifications"
      title="Notifications"
      hint={
        <>
          HTTPS endpoints hear about what needs a person, signed with Standard Webhooks (the secret is shown once).
          Deliveries carry ids, names, reasons and a link, and are retried with backoff.
        </>
      }
    >
      {dialog}
      {canManage ? (
        <form
          className="space-y-2"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <div className="flex flex-wrap items-end gap-2">
            <label className="flex flex-col text-xs font-medium">
              Endpoint URL
              <input
                className={`${inputClass} w-full sm:w-80`}
                type="url"
                value={url}
                onChange={(e) => setUrl(e.target.value)}
                placeholder="https://hooks.example.com/custody"
                required
              />
            </label>
            <label className="flex flex-col text-xs font-medium">
              Format
              <select
                className={inputClass}
                value={format}
                onChange={(e) => setFormat(e.target.value as "standard" | "slack")}
              >
                <option value="standard">Standard Webhooks JSON</option>
                <option value="slack">Slack-compatible message</option>
              </select>
            </label>
            <button className={primaryClass} disabled={!url.trim() || events.length === 0 || create.isPending}>
              Add endpoint
            </button>
          </div>
          <fieldset className="flex flex-wrap gap-x-4 gap-y-1 text-xs">
            <legend className="font-medium">Events</legend>
            {EVENTS.map((ev) => (
              <label key={ev} className="flex items-center gap-1">
                <input
                  type="checkbox"
                  checked={events.includes(ev)}
                  onChange={(e) => setEvents((now) => (e.target.checked ? [...now, ev] : now.filter((x) => x !== ev)))}
                />
                <code>{ev}</code>
              </label>
            ))}
          </fieldset>
          <label className="flex items-center gap-2 text-xs">
            <input
              type="checkbox"
              checked={allowPrivate}
              disabled={setPrivate.isPending}
              onChange={(e) => setPrivate.mutate(e.target.checked)}
            />
            Allow endpoints on loopback and private addresses (internal networks)
          </label>
        </form>
      ) : (
        <p className="text-sm text-neutral-600">Owners and admins add endpoints and send deliveries again.</p>
      )}
      <ErrorLine error={create.error ?? setPrivate.error ?? remove.error ?? resend.error} />
      {shown ? (
        <ShownOnce what={`the signing secret for ${shown.label}`} secret={shown.secret} testId="new-webhook-secret" />
      ) : null}
      <ul className="mt-3 space-y-1 text-sm">
        {endpoints.data.length === 0 ? <li className="text-neutral-600">No endpoints yet.</li> : null}
        {endpoints.data.map((e) => (
          <li key={e.id} className="flex flex-wrap items-center gap-2">
            <span className="break-all font-mono text-xs">{e.url}</span>
            <span className="text-xs text-neutral-600">
              {e.format === "slack" ? "Slack" : "Standard"} · {e.events.join(", ")}
            </span>
            {canManage ? (
              <button
                type="button"
                className={smallClass}
                onClick={() =>
                  void confirm({
                    title: `Remove the endpoint ${e.url}?`,
                    body: "It hears about nothing from now on; its delivery log stays.",
                    confirmLabel: "Remove endpoint",
                  }).then((yes) => yes && remove.mutate(e.id))
                }
              >
                Remove<span className="sr-only"> {e.url}</span>
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      <h3 className="mt-4 text-sm font-semibold">Delivery log</h3>
      <TableScroll label="Delivery log table" className="mt-1">
        <table className="w-full min-w-[36rem] text-left text-sm" aria-label="Delivery log">
          <thead className="text-xs uppercase tracking-wide text-neutral-600">
            <tr>
              <th className="py-1">Event</th>
              <th className="py-1">webhook-id</th>
              <th className="py-1">Status</th>
              <th className="py-1">Attempts</th>
              <th className="py-1">Created</th>
              <th className="py-1">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(deliveries.data ?? []).length === 0 ? (
              <tr>
                <td colSpan={6} className="py-3 text-neutral-600">
                  No deliveries yet.
                </td>
              </tr>
            ) : (
              (deliveries.data ?? []).map((d) => (
                <tr key={d.id} className="border-t border-neutral-100">
                  <td className="py-1.5 font-mono text-xs">{d.event}</td>
                  <td className="py-1.5 font-mono text-xs">{d.id}</td>
                  <td className="py-1.5 text-xs">
                    {d.status}
                    {d.last_error ? ` (${d.last_error})` : d.last_status_code ? ` (HTTP ${d.last_status_code})` : ""}
                  </td>
                  <td className="py-1.5 text-xs">{d.attempts}</td>
                  <td className="py-1.5 text-xs">
                    <Time iso={d.created_at} />
                  </td>
                  <td className="py-1.5 text-right">
                    {canManage ? (
                      <button type="button" className={smallClass} onClick={() => resend.mutate(d.id)}>
                        Send again<span className="sr-only"> {d.id}</span>
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </TableScroll>
    </Section>
  );
}
