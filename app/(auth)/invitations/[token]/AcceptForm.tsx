"use client";

import { signIn } from "next-auth/react";
import { useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { loadPage } from "@/lib/client/navigation";

const input = "mt-1 w-full rounded-md border border-neutral-300 px-3 py-2 text-sm";

/**
 * Sets the password through `POST /api/v1/invitations/{token}/accept` (or confirms an existing account's), then
 * signs in to the invited workspace and opens the dashboard.
 */
export function AcceptForm({
  token,
  email,
  workspaceId,
  accountExists,
  minLength,
}: {
  token: string;
  email: string;
  workspaceId: string;
  accountExists: boolean;
  minLength: number;
}) {
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const password = String(form.get("password") ?? "");
    const name = String(form.get("name") ?? "").trim();
    if (!accountExists && password.length < minLength) {
      setError(`Choose a password of at least ${minLength} characters.`);
      return;
    }
    if (!accountExists && password !== String(form.get("confirm") ?? "")) {
      setError("The two passwords are not the same.");
      return;
    }
    setPending(true);
    setError(null);
    try {
      await apiFetch(`/api/v1/invitations/${encodeURIComponent(token)}/accept`, {
        method: "POST",
        body: accountExists || !name ? { password } : { password, name },
      });
    } catch (err) {
      setPending(false);
      setError(err instanceof Error ? err.message : String(err));
      return;
    }
    const res = await signIn("credentials", { redirect: false, email, password, workspace: workspaceId });
    if (!res || res.error) {
      setPending(false);
      setError(
        `You joined the workspace, but signing in failed: ${res?.error ?? "no answer"}. Go to the sign-in page.`,
      );
      return;
    }
    loadPage("/");
  }

  return (
    <form onSubmit={onSubmit} className="mt-5 space-y-4" noValidate>
      {accountExists ? (
        <p className="text-sm text-neutral-700">
          {email} already has an account. Enter its password to join; this link does not change it.
        </p>
      ) : (
        <div>
          <label htmlFor="name" className="block text-sm font-medium text-neutral-800">
            Your name <span className="font-normal text-neutral-600">(optional)</span>
          </label>
          <input id="name" name="name" type="text" autoComplete="name" maxLength={100} className={input} />
        </div>
      )}
      <div>
        <label htmlFor="password" className="block text-sm font-medium text-neutral-800">
          {accountExists ? "Password" : "Choose a password"}
        </label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete={accountExists ? "current-password" : "new-password"}
          required
          minLength={accountExists ? undefined : minLength}
          aria-describedby={accountExists ? undefined : "password-rule"}
          className={input}
        />
        {accountExists ? null : (
          <p id="password-rule" className="mt-1 text-xs text-neutral-600">
            At least {minLength} characters.
          </p>
        )}
      </div>
      {accountExists ? null : (
        <div>
          <label htmlFor="confirm" className="block text-sm font-medium text-neutral-800">
            Type it again
          </label>
          <input id="confirm" name="confirm" type="password" autoComplete="new-password" required className={input} />
        </div>
      )}
      {error ? (
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      ) : null}
      <button
        type="submit"
        disabled={pending}
        className="w-full rounded-md bg-neutral-900 px-3 py-2 text-sm font-medium text-white hover:bg-neutral-800 disabled:opacity-60"
      >
        {pending ? "Joining…" : accountExists ? "Join the workspace" : "Set password and join"}
      </button>
    </form>
  );
}
