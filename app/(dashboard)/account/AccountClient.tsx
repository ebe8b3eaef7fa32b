"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { loadPage } from "@/lib/client/navigation";
import type { AccountView } from "@/lib/domain/tenancy/account";

const input = "mt-1 w-full rounded-md border border-neutral-300 px-2 py-1.5 text-sm";
const primary = "rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50";

/** Your workspaces (switch) and your password (current one required; your other sessions end). */
export function AccountClient({ account, minLength }: { account: AccountView; minLength: number }) {
  return (
    <div className="max-w-3xl space-y-6">
      <div>
        <h1 className="text-xl font-semibold">Your account</h1>
        <p className="text-sm text-neutral-600">
          {account.name} · <span className="font-mono">{account.email}</span> · {account.role} in{" "}
          {account.workspace.name}
        </p>
      </div>
      <Workspaces account={account} />
      <Password minLength={minLength} />
    </div>
  );
}

function Workspaces({ account }: { account: AccountView }) {
  const switchTo = useMutation({
    mutationFn: (slug: string) => apiFetch("/api/v1/me/workspace", { method: "PUT", body: { workspace: slug } }),
    onSuccess: () => loadPage("/"),
  });
  return (
    <section aria-labelledby="workspaces-h" className="rounded-lg border border-neutral-200 bg-white p-4">
      <h2 id="workspaces-h" className="text-base font-semibold">
        Workspaces
      </h2>
      <p className="mb-3 text-sm text-neutral-600">
        Every page and API call of this session works in one workspace. Switch to another you belong to here or in the
        header.
      </p>
      <ul className="divide-y divide-neutral-100">
        {account.workspaces.map((w) => (
          <li
            key={w.slug}
            className="flex items-center justify-between gap-3 py-2 text-sm"
            data-testid="workspace-row"
            data-slug={w.slug}
          >
            <span>
              <span className="font-medium">{w.name}</span>{" "}
              <span className="font-mono text-xs text-neutral-600">{w.slug}</span> · {w.role}
            </span>
            {w.current ? (
              <span className="text-emerald-800">
                <span aria-hidden="true">✔</span> current
              </span>
            ) : (
              <button
                type="button"
                className="rounded border border-neutral-300 px-2 py-0.5 text-xs hover:bg-neutral-100"
                disabled={switchTo.isPending}
                onClick={() => switchTo.mutate(w.slug)}
              >
                Switch to {w.name}
              </button>
            )}
          </li>
        ))}
      </ul>
      {switchTo.error ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {switchTo.error.message}
        </p>
      ) : null}
    </section>
  );
}

function Password({ minLength }: { minLength: number }) {
  const [mismatch, setMismatch] = useState(false);
  const change = useMutation({
    mutationFn: (body: { current_password: string; new_password: string }) =>
      apiFetch<{ sessions_ended: number; audit_seq: number }>("/api/v1/me/password", { method: "POST", body }),
  });
  return (
    <section aria-labelledby="password-h" className="rounded-lg border border-neutral-200 bg-white p-4">
      <h2 id="password-h" className="text-base font-semibold">
        Change your password
      </h2>
      <p className="mb-3 text-sm text-neutral-600">
        Your other sessions end when it changes; this one stays signed in.
      </p>
      <form
        className="grid max-w-sm gap-3"
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const data = new FormData(form);
          const next = String(data.get("new_password") ?? "");
          if (next !== String(data.get("confirm_password") ?? "")) {
            setMismatch(true);
            return;
          }
          setMismatch(false);
          change.mutate(
            { current_password: String(data.get("current_password") ?? ""), new_password: next },
            { onSuccess: () => form.reset() },
          );
        }}
      >
        <label className="text-sm font-medium text-neutral-800">
          Current password
          <input className={input} name="current_password" type="password" autoComplete="current-password" required />
        </label>
        <label className="text-sm font-medium text-neutral-800">
          New password
          <input
            className={input}
            name="new_password"
            type="password"
            autoComplete="new-password"
            required
            minLength={minLength}
            aria-describedby="new-password-rule"
          />
          <span id="new-password-rule" className="mt-1 block text-xs font-normal text-neutral-600">
            At least {minLength} characters.
          </span>
        </label>
        <label className="text-sm font-medium text-neutral-800">
          New password again
          <input className={input} name="confirm_password" type="password" autoComplete="new-password" required />
        </label>
        <div>
          <button className={primary} disabled={change.isPending}>
            {change.isPending ? "Changing…" : "Change password"}
          </button>
        </div>
      </form>
      {mismatch ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          The two new passwords are not the same.
        </p>
      ) : null}
      {change.error ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {change.error.message}
        </p>
      ) : null}
      {change.data ? (
        <p role="status" className="mt-2 text-sm text-emerald-800">
          Password changed; {change.data.sessions_ended} other session{change.data.sessions_ended === 1 ? "" : "s"}{" "}
          ended. Recorded in the audit log as entry #{change.data.audit_seq}.
        </p>
      ) : null}
    </section>
  );
}
