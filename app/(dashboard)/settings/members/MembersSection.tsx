"use client";

/**
 * Settings → Members: who is in this workspace with which role, open invitation links, and — for owners and
 * admins — inviting a person (a one-time link to hand over), changing a role, removing a member, and lifting a
 * sign-in lock. Everyone else sees the same lists read-only. Every change goes through the API, where the server
 * checks the role and the rules (`not_allowed`, `last_owner`, `already_member`) and writes the audit entry.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { Role } from "@/db/schema/enums";
import { apiFetch } from "@/lib/client/api";
import { CopyButton } from "@/components/ui/CopyButton";
import { useConfirm } from "@/components/ui/ConfirmDialog";
import { Time } from "@/components/ui/time";
import { inputClass, primaryClass, TableScroll } from "../_components/kit";
import { MAX_SIGN_IN_FAILURES, SIGN_IN_WINDOW_MINUTES } from "@/lib/domain/tenancy/sign-in-limits";

export type MemberRow = {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  revoked: boolean;
  locked: { failures: number; locked_until: string } | null;
};

export type InvitationRow = {
  id: string;
  email: string;
  role: Role;
  invited_by: string;
  created_at: string;
  expires_at: string;
};

type MembersData = { members: MemberRow[]; invitations: InvitationRow[] };
type Invited = { invitation_url: string; expires_at: string; invitation: InvitationRow; audit_seq: number };

const KEY = ["settings", "members"] as const;

/** Every role, most authority first (a Record so a new role cannot be forgotten here; values stay out of db/ in the browser). */
const ROLE_ORDER: Record<Role, number> = { owner: 0, admin: 1, approver: 2, responder: 3, viewer: 4 };
const ROLES = (Object.keys(ROLE_ORDER) as Role[]).sort((a, b) => ROLE_ORDER[a] - ROLE_ORDER[b]);

export function MembersSection({
  initial,
  canManage,
  canUnlock,
  me,
}: {
  initial: MembersData;
  canManage: boolean;
  canUnlock: boolean;
  me: { userId: string; role: Role };
}) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: KEY,
    queryFn: () => apiFetch<MembersData>("/api/v1/settings/members"),
    initialData: initial,
  });
  const [done, setDone] = useState<string | null>(null);
  const { confirm, dialog } = useConfirm();
  const refresh = () => qc.invalidateQueries({ queryKey: KEY });

  const unlock = useMutation({
    mutationFn: (m: MemberRow) =>
      apiFetch<{ email: string; failures: number; audit_seq: number }>(
        `/api/v1/settings/members/${encodeURIComponent(m.user_id)}/unlock`,
        { method: "POST", body: {} },
      ),
    onSuccess: (r) =>
      setDone(
        `Unlocked ${r.email} (${r.failures} failed sign-ins forgotten). Recorded in the audit log as entry #${r.audit_seq}.`,
      ),
    onSettled: refresh,
  });
  const changeRole = useMutation({
    mutationFn: ({ m, role }: { m: MemberRow; role: Role }) =>
      apiFetch<{ email: string; role: Role; previous_role: Role; audit_seq: number | null }>(
        `/api/v1/settings/members/${encodeURIComponent(m.user_id)}`,
        {
          method: "PATCH",
          body: { role },
        },
      ),
    onSuccess: (r) =>
      setDone(
        `${r.email} is now ${r.role} (was ${r.previous_role}); it applies to their next request. Recorded in the audit log as entry #${r.audit_seq}.`,
      ),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (m: MemberRow) =>
      apiFetch<{ email: string; sessions_ended: number; audit_seq: number }>(
        `/api/v1/settings/members/${encodeURIComponent(m.user_id)}`,
        { method: "DELETE" },
      ),
    onSuccess: (r) =>
      setDone(
        `Removed ${r.email}; ${r.sessions_ended} open session${r.sessions_ended === 1 ? "" : "s"} ended. Their past decisions stay in the audit log. Recorded as entry #${r.audit_seq}.`,
      ),
    onSettled: refresh,
  });

  const { members, invitations } = q.data;
  const locked = members.filter((m) => m.locked).length;
  const error = unlock.error ?? changeRole.error ?? remove.error;
  const busy = unlock.isPending || changeRole.isPending || remove.isPending;
  /** Owners touch every role; admins every role but owner. */
  const mayEdit = (m: MemberRow) => canManage && !m.revoked && (me.role === "owner" || m.role !== "owner");
  const offered = me.role === "owner" ? ROLES : ROLES.filter((r) => r !== "owner");
  const activeOwners = members.filter((m) => m.role === "owner" && !m.revoked).length;
  /** The only active owner can be neither removed nor demoted: the workspace would have nobody to run it. */
  const onlyOwner = (m: MemberRow) => m.role === "owner" && !m.revoked && activeOwners <= 1;

  return (
    <section id="members" aria-labelledby="members-h" className="rounded-lg border border-neutral-200 bg-white p-4">
      <h2 id="members-h" className="text-base font-semibold">
        Members
      </h2>
      {dialog}
      <p className="mb-3 text-sm text-neutral-600">
        People in this workspace and their roles (what each role may do is in the table below). After{" "}
        {MAX_SIGN_IN_FAILURES} failed sign-ins from one address within {SIGN_IN_WINDOW_MINUTES} minutes an email is
        locked out there, even with the right password, until the window passes or an owner unlocks it.
      </p>
      {canManage ? (
        <InviteForm roles={offered} onInvited={refresh} />
      ) : (
        <p className="mb-3 text-sm text-neutral-700" data-testid="members-read-only">
          Only owners and admins add people, change roles or remove members; your role here is {me.role}.
        </p>
      )}
      {locked > 0 && !canUnlock ? (
        <p className="mb-2 text-sm text-neutral-700">Owners and admins can unlock a locked member.</p>
      ) : null}
      <TableScroll label="Members">
        <table className="w-full min-w-[40rem] text-left text-sm">
          <thead className="text-xs uppercase tracking-wide text-neutral-600">
            <tr>
              <th className="py-1">Name</th>
              <th className="py-1">Email</th>
              <th className="py-1">Role</th>
              <th className="py-1">State</th>
              <th className="py-1">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr
                key={m.user_id}
                className="border-t border-neutral-100"
                data-testid="member-row"
                data-email={m.email}
                data-role={m.role}
                data-locked={m.locked ? "true" : "false"}
              >
                <td className="py-1.5">
                  {m.name}
                  {m.user_id === me.userId ? <span className="ml-1 text-xs text-neutral-600">(you)</span> : null}
                </td>
                <td className="py-1.5 font-mono text-xs">{m.email}</td>
                <td className="py-1.5">
                  {mayEdit(m) && !onlyOwner(m) ? (
                    <>
                      <label className="sr-only" htmlFor={`role-${m.user_id}`}>
                        Role of {m.email}
                      </label>
                      <select
                        id={`role-${m.user_id}`}
                        className="rounded border border-neutral-300 px-1.5 py-0.5 text-sm"
                        value={m.role}
                        disabled={busy}
                        onChange={(e) => {
                          const role = e.target.value as Role;
                          setDone(null);
                          // The select shows the stored role until the change is confirmed and saved.
                          void confirm({
                            title: `Change the role of ${m.email} from ${m.role} to ${role}?`,
                            body: "It applies to their next request. The change is recorded in the audit log.",
                            confirmLabel: `Make ${role}`,
                            tone: "primary",
                          }).then((yes) => yes && changeRole.mutate({ m, role }));
                        }}
                      >
                        {offered.map((r) => (
                          <option key={r} value={r}>
                            {r}
                          </option>
                        ))}
                      </select>
                    </>
                  ) : (
                    <span data-testid="member-role">{m.role}</span>
                  )}
                </td>
                <td className="py-1.5 text-xs">
                  {m.revoked ? (
                    <span className="text-red-800">✕ removed</span>
                  ) : m.locked ? (
                    <span className="text-amber-900" data-testid="member-lock">
                      <span aria-hidden="true">🔒</span> locked out until <Time iso={m.locked.locked_until} /> after{" "}
                      {m.locked.failures} failed sign-ins
                    </span>
                  ) : (
                    <span className="text-emerald-800">✔ active</span>
                  )}
                </td>
                <td className="py-1.5 text-right whitespace-nowrap">
                  {canUnlock && m.locked && !m.revoked ? (
                    <button
                      type="button"
                      className="rounded border border-amber-400 px-2 py-0.5 text-xs text-amber-900 hover:bg-amber-50 disabled:opacity-50"
                      disabled={busy}
                      onClick={() => {
                        setDone(null);
                        void confirm({
                          title: `Unlock ${m.email}?`,
                          body: `Their ${m.locked!.failures} failed sign-ins are forgotten and the right password works again at once.`,
                          confirmLabel: `Unlock ${m.email}`,
                          tone: "primary",
                        }).then((yes) => yes && unlock.mutate(m));
                      }}
                    >
                      Unlock
                    </button>
                  ) : null}
                  {mayEdit(m) && onlyOwner(m) ? (
                    <span className="text-xs text-neutral-600" data-testid="only-owner">
                      the only owner: make someone else owner first
                    </span>
                  ) : null}
                  {mayEdit(m) && !onlyOwner(m) ? (
                    <button
                      type="button"
                      className="ml-1 rounded border border-red-300 px-2 py-0.5 text-xs text-red-800 hover:bg-red-50 disabled:opacity-50"
                      disabled={busy}
                      onClick={() => {
                        setDone(null);
                        void confirm({
                          title: `Remove ${m.email} (${m.role}) from this workspace?`,
                          body: "Their sessions here end at once; their past decisions stay in the audit log.",
                          confirmLabel: `Remove ${m.email}`,
                        }).then((yes) => yes && remove.mutate(m));
                      }}
                    >
                      Remove
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {done ? (
        <p role="status" className="mt-2 text-sm text-emerald-800">
          {done}
        </p>
      ) : null}
      {error ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {error.message}
        </p>
      ) : null}
      <h3 className="mt-4 text-sm font-semibold">Open invitations</h3>
      {invitations.length === 0 ? (
        <p className="text-sm text-neutral-600" data-testid="invitations-empty">
          No open invitation links.
        </p>
      ) : (
        <TableScroll label="Open invitations">
          <table className="w-full min-w-[36rem] text-left text-sm">
            <thead className="text-xs uppercase tracking-wide text-neutral-600">
              <tr>
                <th className="py-1">Email</th>
                <th className="py-1">Role</th>
                <th className="py-1">Invited by</th>
                <th className="py-1">Link valid until</th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr
                  key={i.id}
                  className="border-t border-neutral-100"
                  data-testid="invitation-row"
                  data-email={i.email}
                >
                  <td className="py-1.5 font-mono text-xs">{i.email}</td>
                  <td className="py-1.5">{i.role}</td>
                  <td className="py-1.5 text-xs">{i.invited_by}</td>
                  <td className="py-1.5 text-xs">
                    <Time iso={i.expires_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

/** Email + role → a one-time link shown once, to hand to the person (no mail server is assumed). */
function InviteForm({ roles, onInvited }: { roles: readonly Role[]; onInvited: () => void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const invite = useMutation({
    mutationFn: () =>
      apiFetch<Invited>("/api/v1/settings/invitations", { method: "POST", body: { email: email.trim(), role } }),
    onSuccess: () => {
      setEmail("");
      onInvited();
    },
  });
  return (
    <div className="mb-4">
      <form
        className="flex flex-wrap items-end gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          invite.mutate();
        }}
      >
        <div className="flex min-w-64 flex-col text-xs font-medium">
          <label htmlFor="invite-email">Email of the person to add</label>
          <input
            id="invite-email"
            className={inputClass}
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            placeholder="name@example.com"
            required
          />
        </div>
        <div className="flex flex-col text-xs font-medium">
          <label htmlFor="invite-role">Their role</label>
          <select
            id="invite-role"
            className={inputClass}
            value={role}
            onChange={(e) => setRole(e.target.value as Role)}
          >
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        <button className={primaryClass} disabled={!email.trim() || invite.isPending}>
          Create invitation link
        </button>
      </form>
      {invite.error ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {invite.error.message}
        </p>
      ) : null}
      {invite.data ? (
        <div
          role="status"
          className="mt-3 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm"
          data-testid="invitation-created"
        >
          <p className="font-medium">
            Hand this link to {invite.data.invitation.email} ({invite.data.invitation.role}): it is shown only now,
            works once, and is valid until <Time iso={invite.data.expires_at} />.
          </p>
          <div className="mt-2 flex items-center gap-2">
            <code className="break-all rounded bg-white px-2 py-1 font-mono text-xs" data-testid="invitation-url">
              {invite.data.invitation_url}
            </code>
            <CopyButton value={invite.data.invitation_url} />
          </div>
        </div>
      ) : null}
    </div>
  );
}
