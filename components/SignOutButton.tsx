"use client";

import { signOut } from "next-auth/react";

/** Ends the session and returns to the sign-in page. */
export function SignOutButton() {
  return (
    <button
      type="button"
      onClick={() => signOut({ callbackUrl: "/login" })}
      className="rounded px-2 py-1 text-neutral-700 hover:bg-neutral-100"
    >
      Sign out
    </button>
  );
}
