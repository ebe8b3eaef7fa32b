"use client";

import { signIn } from "next-auth/react";
import { useState } from "react";

/** "Sign in with <provider>": starts the OpenID Connect sign-in at the configured identity provider (decision 0041). */
export function SingleSignOnButton({
  providerId,
  providerName,
  callbackUrl,
}: {
  providerId: string;
  providerName: string;
  callbackUrl: string;
}) {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      disabled={pending}
      onClick={() => {
        setPending(true);
        void signIn(providerId, { callbackUrl });
      }}
      className="w-full rounded-md border border-neutral-300 bg-white px-3 py-2 text-sm font-medium text-neutral-900 hover:bg-neutral-50 disabled:opacity-60"
    >
      {pending ? `Going to ${providerName}…` : `Sign in with ${providerName}`}
    </button>
  );
}
