"use client";

/**
 * The task's egress custody (docs/concepts.md#egress-and-vault-custody): per host its runs asked to reach, the requests
 * the egress proxy allowed and denied, under which policy versions, for which tools and credential references, and
 * whether the current policy still admits the host ("drift"). Refetched when the task's event count moves.
 */
import Link from "next/link";
import { useState } from "react";
import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Role } from "@/db/schema/enums";
import { apiFetch } from "@/lib/client/api";
import { PERMISSIONS } from "@/lib/domain/authz";
import { Time } from "@/components/ui/time";
import { policyVersionName } from "@/lib/domain/policies/version-name";

type EgressRequest = {
  event_id: string;
  occurred_at: string;
  outcome: "allowed" | "denied";
  method: string | null;
  path: string | null;
  tool: string | null;
  credential_ref: string | null;
  attempt: number | null;
};

type EgressHost = {
  host: string;
  allowed: number;
  denied: number;
  requests: EgressRequest[];
  last_at: string;
  ports: number[];
  policy_versions: string[];
  tools: string[];
  credential_refs: string[];
  in_current_policy: boolean | null;
  drift: boolean;
};

const list = (xs: string[]) => (xs.length ? xs.join(", ") : "—");

type CredentialCustody = {
  credential_ref: string;
  last_issued_at: string | null;
  last_used_at: string | null;
  used: number;
  uses: Array<{
    event_id: string;
    occurred_at: string;
    tool: string | null;
    host: string | null;
    purpose: string | null;
    attempt: number | null;
  }>;
  last_revoked_at: string | null;
  last_expired_at: string | null;
  scope: string | null;
  expires_at: string | null;
  can_check: boolean;
  last_check: { outcome: string; revoked: boolean | null; checked_at: string; checked_by: string | null } | null;
};

/** A vault-lane event that carried a credential value or placeholder (redacted before storage). */
type FlaggedVaultEvent = {
  event_id: string;
  type: string;
  credential_ref: string | null;
  occurred_at: string;
  kinds: string[];
};

/** Egress per host, then the credentials the run held with "Test revocation". */
export function EgressTab({ taskId, eventCount, role }: { taskId: string; eventCount: number; role: Role }) {
  return (
    <div className="space-y-6">
      <EgressHosts taskId={taskId} eventCount={eventCount} />
      <Credentials
        taskId={taskId}
        eventCount={eventCount}
        canCheck={(PERMISSIONS["credentials.check"].roles as readonly Role[]).includes(role)}
      />
    </div>
  );
}

function Credentials({ taskId, eventCount, canCheck }: { taskId: string; eventCount: number; canCheck: boolean }) {
  const client = useQueryClient();
  const key = ["task", taskId, "credentials", eventCount];
  const q = useQuery({
    queryKey: key,
    queryFn: () =>
      apiFetch<{ credentials: CredentialCustody[]; flagged_events?: FlaggedVaultEvent[] }>(
        `/api/v1/tasks/${encodeURIComponent(taskId)}/credentials`,
      ),
    // A new event (a revocation check writes one) changes the key: keep the list and the answer shown meanwhile.
    placeholderData: keepPreviousData,
  });
  const [busy, setBusy] = useState<string | null>(null);
  const [result, setResult] = useState<Record<string, { tone: "ok" | "bad" | "neutral"; message: string }>>({});
  return (
    <section aria-labelledby="vault-h" data-testid="credentials-panel">
      <h3 id="vault-h" className="text-sm font-semibold">
        Credentials the run held
      </h3>
      {q.data?.flagged_events?.length ? <FlaggedVaultEvents taskId={taskId} events={q.data.flagged_events} /> : null}
      {q.isPending ? (
        <p className="p-2 text-sm text-neutral-600">Loading credentials…</p>
      ) : q.error ? (
        <p role="alert" className="p-2 text-sm text-red-700">
          Could not load credentials: {q.error.message}
        </p>
      ) : q.data.credentials.length === 0 ? (
        <p className="p-2 text-sm text-neutral-600">
          No credential events recorded (the vault lane reports issue, use, revocation and expiry by credential
          reference).
        </p>
      ) : (
        <ul className="mt-1 space-y-2">
          {q.data.credentials.map((c) => (
            <li
              key={c.credential_ref}
              className="rounded border border-neutral-200 p-2 text-sm"
              data-testid="credential-row"
              data-ref={c.credential_ref}
            >
              <div className="flex flex-wrap items-center justify-between gap-2">
                <code className="font-mono text-xs">{c.credential_ref}</code>
                {canCheck && c.can_check ? (
                  <button
                    type="button"
                    className="rounded-md border border-neutral-400 bg-white px-2 py-1 text-xs font-medium disabled:opacity-60"
                    disabled={busy !== null}
                    onClick={async () => {
                      setBusy(c.credential_ref);
                      try {
                        const r = await apiFetch<{ outcome: string; message: string }>(
                          `/api/v1/tasks/${encodeURIComponent(taskId)}/credentials/${encodeURIComponent(c.credential_ref)}/revocation-check`,
                          { method: "POST" },
                        );
                        setResult((x) => ({
                          ...x,
                          [c.credential_ref]: {
                            tone: r.outcome === "revoked" ? "ok" : r.outcome === "not_revoked" ? "bad" : "neutral",
                            message: r.message,
                          },
                        }));
                        await client.invalidateQueries({ queryKey: ["task", taskId, "credentials"] });
                      } catch (err) {
                        setResult((x) => ({
                          ...x,
                          [c.credential_ref]: {
                            tone: "bad",
                            message: err instanceof Error ? err.message : String(err),
                          },
                        }));
                      } finally {
                        setBusy(null);
                      }
                    }}
                  >
                    {busy === c.credential_ref ? "Asking…" : "Test revocation"}
                  </button>
                ) : !c.can_check ? (
                  <span className="text-xs text-neutral-700">No revocation endpoint in the current policy</span>
                ) : null}
              </div>
              <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-xs text-neutral-800">
                <dt>Last issued</dt>
                <dd>
                  <Time iso={c.last_issued_at} />
                  {c.scope ? ` · scope ${c.scope}` : ""}
                </dd>
                <dt>Used</dt>
                <dd data-testid="credential-used" data-count={c.used}>
                  {c.used === 0
                    ? "never (no credential.used event)"
                    : `${c.used} time${c.used === 1 ? "" : "s"} (credential.used events): ${
                        c.used > c.uses.length ? `the newest ${c.uses.length} are listed` : "each is listed"
                      } below`}
                </dd>
                <dt>Revocation</dt>
                <dd data-testid="credential-revocation">
                  <RevocationCheck credential={c} canCheck={canCheck} />
                  <span className="block text-neutral-700" data-testid="credential-revoked-event">
                    {c.last_revoked_at ? (
                      <>
                        The vault reported it revoked at <Time iso={c.last_revoked_at} />.
                      </>
                    ) : (
                      "The vault reported no revocation (no credential.revoked event)."
                    )}
                  </span>
                </dd>
              </dl>
              {c.uses.length ? (
                <ul
                  className="mt-1 space-y-0.5 border-l-2 border-neutral-200 pl-2 text-xs"
                  aria-label={`Uses of ${c.credential_ref}`}
                >
                  {c.uses.map((u) => (
                    <li key={u.event_id} data-testid="credential-use" data-event-id={u.event_id}>
                      <Link
                        className="underline"
                        href={`/tasks/${encodeURIComponent(taskId)}?event=${encodeURIComponent(u.event_id)}`}
                      >
                        <Time iso={u.occurred_at} />
                      </Link>{" "}
                      · {u.tool ? <span className="font-mono">{u.tool}</span> : "no tool named"}
                      {u.host ? (
                        <>
                          {" "}
                          → <span className="font-mono break-all">{u.host}</span>
                        </>
                      ) : null}
                      {u.purpose ? ` · ${u.purpose}` : ""}
                      {u.attempt !== null ? ` · attempt ${u.attempt}` : ""}
                    </li>
                  ))}
                </ul>
              ) : null}
              <div aria-live="polite">
                {result[c.credential_ref] ? (
                  <p
                    className={`mt-1 text-sm ${result[c.credential_ref]!.tone === "ok" ? "text-green-800" : result[c.credential_ref]!.tone === "bad" ? "text-red-800" : "text-neutral-800"}`}
                    data-testid="revocation-result"
                  >
                    {result[c.credential_ref]!.message}
                  </p>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** What a revocation check's outcome means, in words. */
const CHECK_WORDS: Record<string, string> = {
  revoked: "revoked",
  not_revoked: "still valid (not revoked)",
  ambiguous: "no clear answer; nothing is proven",
  timeout: "no answer in time; nothing is proven",
  unreachable: "endpoint unreachable; nothing is proven",
  refused: "endpoint not called (link-local or metadata address); nothing is proven",
};

/**
 * The last "Test revocation" answer with its time ("Revocation checked 2026-01-05 12:03:00 UTC: revoked"), or "Not
 * checked" with what to do.
 */
function RevocationCheck({ credential: c, canCheck }: { credential: CredentialCustody; canCheck: boolean }) {
  if (c.last_check) {
    const tone =
      c.last_check.outcome === "revoked"
        ? "text-green-800"
        : c.last_check.outcome === "not_revoked"
          ? "text-red-800"
          : "text-neutral-800";
    return (
      <span className="block" data-testid="credential-last-check" data-outcome={c.last_check.outcome}>
        Revocation checked <Time iso={c.last_check.checked_at} />:{" "}
        <strong className={tone}>{CHECK_WORDS[c.last_check.outcome] ?? c.last_check.outcome}</strong>
        {c.last_check.checked_by ? ` (asked by ${c.last_check.checked_by})` : ""}
      </span>
    );
  }
  return (
    <span className="block" data-testid="credential-last-check" data-outcome="not_checked">
      Not checked:{" "}
      {!c.can_check
        ? "the current policy names no revocation endpoint for it; add a revocation_url to its credential entry in a new policy version, then press Test revocation."
        : canCheck
          ? "press Test revocation to ask the credential's owner whether it is revoked."
          : "a responder, owner or admin can press Test revocation to ask the credential's owner."}
    </span>
  );
}

/**
 * The warning for vault-lane events that carried a credential value or placeholder: the vault lane is metadata only
 * (docs/concepts.md#redaction), so each was redacted before storage; each links to its event on the timeline.
 */
function FlaggedVaultEvents({ taskId, events }: { taskId: string; events: FlaggedVaultEvent[] }) {
  return (
    <div
      role="alert"
      className="mt-1 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-900"
      data-testid="vault-flagged"
    >
      <p className="font-medium">
        {events.length === 1 ? "This event" : `${events.length === 50 ? "At least 50" : events.length} events`} carried
        a credential value or placeholder; {events.length === 1 ? "it was" : "they were"} redacted before storage. The
        vault lane keeps metadata only: fix the runtime or vault integration that sent{" "}
        {events.length === 1 ? "it" : "them"}.
      </p>
      <ul className="mt-1 space-y-0.5 text-xs">
        {events.map((e) => (
          <li key={e.event_id} data-testid="vault-flagged-event" data-event-id={e.event_id}>
            <Link
              className="font-mono underline"
              href={`/tasks/${encodeURIComponent(taskId)}?event=${encodeURIComponent(e.event_id)}`}
            >
              {e.type}
            </Link>
            {e.credential_ref ? (
              <>
                {" "}
                · <code className="font-mono">{e.credential_ref}</code>
              </>
            ) : null}{" "}
            · <Time iso={e.occurred_at} />
            {e.kinds.length ? ` · ${e.kinds.join(", ")}` : ""}
          </li>
        ))}
      </ul>
    </div>
  );
}

function EgressHosts({ taskId, eventCount }: { taskId: string; eventCount: number }) {
  const q = useQuery({
    queryKey: ["task", taskId, "egress", eventCount],
    queryFn: () =>
      apiFetch<{ current_policy_version: number | null; hosts: EgressHost[] }>(
        `/api/v1/tasks/${encodeURIComponent(taskId)}/egress`,
      ),
    placeholderData: keepPreviousData,
  });
  if (q.isPending) return <p className="p-4 text-sm text-neutral-600">Loading egress…</p>;
  if (q.error) {
    return (
      <p role="alert" className="p-4 text-sm text-red-700">
        Could not load egress: {q.error.message}{" "}
        <button type="button" className="underline" onClick={() => q.refetch()}>
          Retry
        </button>
      </p>
    );
  }
  const { hosts, current_policy_version: current } = q.data;
  const drifted = hosts.filter((h) => h.drift).length;
  return (
    <div className="space-y-2" data-testid="egress-tab">
      <p className="text-sm text-neutral-800">
        {current === null ? (
          <>
            No policy is active, so drift cannot be judged.{" "}
            <Link className="underline" href="/policies">
              Policies
            </Link>
          </>
        ) : (
          <>
            Judged against the current policy{" "}
            <Link className="underline" href={`/policies?v=${current}`}>
              {policyVersionName(current)}
            </Link>
            {drifted ? (
              <strong className="text-red-800">
                : {drifted} host{drifted === 1 ? "" : "s"} this run reached {drifted === 1 ? "is" : "are"} no longer
                admitted.
              </strong>
            ) : (
              ": every host this run reached is still admitted."
            )}
          </>
        )}
      </p>
      {hosts.length === 0 ? (
        <p className="p-2 text-sm text-neutral-600">
          No egress recorded. The egress proxy reports each request as egress.allowed or egress.denied with its host.
        </p>
      ) : (
        <div className="relative overflow-x-auto">
          <table className="w-full text-left text-sm">
            <thead className="text-xs uppercase tracking-wide text-neutral-600">
              <tr>
                <th scope="col" className="px-2 py-1.5">
                  Host
                </th>
                <th scope="col" className="px-2 py-1.5">
                  Allowed
                </th>
                <th scope="col" className="px-2 py-1.5">
                  Denied
                </th>
                <th scope="col" className="px-2 py-1.5">
                  Current policy
                </th>
                <th scope="col" className="px-2 py-1.5">
                  Policy versions
                </th>
                <th scope="col" className="px-2 py-1.5">
                  Tools
                </th>
                <th scope="col" className="px-2 py-1.5">
                  Credentials
                </th>
                <th scope="col" className="px-2 py-1.5">
                  Last
                </th>
              </tr>
            </thead>
            <tbody>
              {hosts.flatMap((h) => [
                <tr
                  key={h.host}
                  className={`border-t border-neutral-100 ${h.drift ? "bg-red-50" : ""}`}
                  data-testid="egress-host"
                  data-host={h.host}
                  data-drift={h.drift}
                >
                  <td className="px-2 py-2 font-mono text-xs break-all">
                    <Link
                      className="underline"
                      href={`/tasks?host=${encodeURIComponent(h.host)}`}
                      title="Every task that reached this host"
                    >
                      {h.host}
                    </Link>
                    {h.ports.length ? <span className="text-neutral-700">:{h.ports.join(",")}</span> : null}
                  </td>
                  <td className="px-2 py-2 tabular-nums">{h.allowed}</td>
                  <td className="px-2 py-2 tabular-nums">{h.denied}</td>
                  <td className="px-2 py-2 text-xs">
                    {h.in_current_policy === null ? (
                      "—"
                    ) : h.in_current_policy ? (
                      "admitted"
                    ) : h.drift ? (
                      <strong className="text-red-800">drift: no longer admitted</strong>
                    ) : (
                      "not admitted"
                    )}
                  </td>
                  <td className="px-2 py-2 text-xs">{list(h.policy_versions.map(policyVersionName))}</td>
                  <td className="px-2 py-2 text-xs">{list(h.tools)}</td>
                  <td className="px-2 py-2 font-mono text-xs">{list(h.credential_refs)}</td>
                  <td className="px-2 py-2 text-xs">
                    <Time iso={h.last_at} />
                  </td>
                </tr>,
                <tr key={`${h.host} requests`} className={h.drift ? "bg-red-50" : ""}>
                  <td colSpan={8} className="px-2 pb-2">
                    <HostRequests taskId={taskId} host={h} />
                  </td>
                </tr>,
              ])}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/**
 * The requests a host's counts count: each `egress.allowed` / `egress.denied` event (newest 20), linked to the timeline.
 */
function HostRequests({ taskId, host: h }: { taskId: string; host: EgressHost }) {
  const total = h.allowed + h.denied;
  return (
    <details className="text-xs" data-testid="egress-requests" data-count={h.requests.length}>
      <summary className="cursor-pointer text-neutral-800">
        {total === h.requests.length
          ? `The ${total} request${total === 1 ? "" : "s"} counted`
          : `The newest ${h.requests.length} of ${total} requests counted`}{" "}
        ({h.allowed} allowed, {h.denied} denied)
      </summary>
      <ul className="mt-1 space-y-0.5 pl-2">
        {h.requests.map((r) => (
          <li key={r.event_id} data-testid="egress-request" data-outcome={r.outcome}>
            <Link
              className="underline"
              href={`/tasks/${encodeURIComponent(taskId)}?event=${encodeURIComponent(r.event_id)}`}
            >
              <Time iso={r.occurred_at} />
            </Link>{" "}
            · {r.outcome === "allowed" ? "allowed" : <strong className="text-red-800">denied</strong>}
            {r.method || r.path ? (
              <span className="font-mono break-all">
                {" "}
                {r.method ?? ""} {r.path ?? ""}
              </span>
            ) : null}
            {r.tool ? (
              <>
                {" "}
                · tool <span className="font-mono">{r.tool}</span>
              </>
            ) : null}
            {r.credential_ref ? (
              <>
                {" "}
                · credential <span className="font-mono">{r.credential_ref}</span>
              </>
            ) : null}
            {r.attempt !== null ? ` · attempt ${r.attempt}` : ""}
          </li>
        ))}
      </ul>
    </details>
  );
}
