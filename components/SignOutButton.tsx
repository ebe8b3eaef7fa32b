"use client";

/**
 * Ends the session and returns to the sign-in page. next-auth's client library (≈ 15 KB gzip) is loaded when the
 * button is pressed, not with every dashboard page.
 */
export function SignOutButton() {
  return (
    <button
      type="button"
      onClick={async () => {
        const { signOut } = await import("next-auth/react");
        await signOut({ callbackUrl: "/login" });
      }}
      className="rounded px-2 py-1 text-neutral-700 hover:bg-neutral-100"
    >
      Sign out
    </button>
  );
}
