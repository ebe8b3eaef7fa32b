import type { Metadata } from "next";
import Link from "next/link";
import { getOwnerDb } from "@/db";
import { INVITATION_DAYS, invitationInfo } from "@/lib/domain/tenancy/invitations";
import { MIN_PASSWORD_LENGTH } from "@/lib/domain/tenancy/passwords";
import { AcceptForm } from "./AcceptForm";

// The token is in the address: never send it on as a referrer.
export const metadata: Metadata = { title: "Join a workspace", referrer: "no-referrer" };

const CLOSED = {
  used: "This link was already used. Sign in with your email and password.",
  expired: `This link has expired (links are valid ${INVITATION_DAYS} days). Ask an owner or admin of the workspace for a new one.`,
  withdrawn:
    "This link was replaced by a newer one or withdrawn. Use the newest link you were given, or ask for a new one.",
} as const;

/**
 * The page an invitation link opens (no session needed): whose invitation it is, to which workspace and role,
 * and a form that sets the password (or, for an existing account, asks for it) and signs the person in.
 */
export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  // Found by the token's hash before any tenant is known: the owner's database (decision 0016).
  const info = await invitationInfo(await getOwnerDb(), token);
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-md rounded-lg border border-neutral-200 bg-white p-6 shadow-sm">
        <h1 className="text-lg font-semibold">Run Custody</h1>
        {!info ? (
          <Closed message="This invitation link is not valid. Check that you copied the whole link, or ask for a new one." />
        ) : info.state !== "open" ? (
          <Closed message={CLOSED[info.state]} />
        ) : (
          <>
            <p className="mt-1 text-sm text-neutral-700" data-testid="invitation-summary">
              You are invited to <strong>{info.workspace.name}</strong> as <strong>{info.role}</strong>, with the email{" "}
              <span className="font-mono">{info.email}</span>.
            </p>
            <AcceptForm
              token={token}
              email={info.email}
              workspaceId={info.workspace.id}
              accountExists={info.account_exists}
              minLength={MIN_PASSWORD_LENGTH}
            />
          </>
        )}
      </div>
    </main>
  );
}

function Closed({ message }: { message: string }) {
  return (
    <div className="mt-3 space-y-3 text-sm" data-testid="invitation-closed">
      <p role="alert" className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-amber-900">
        {message}
      </p>
      <Link href="/login" className="inline-block underline">
        Go to sign-in
      </Link>
    </div>
  );
}
