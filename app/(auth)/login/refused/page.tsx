import type { Metadata } from "next";
import Link from "next/link";
import { singleSignOnConfig } from "@/lib/config/single-sign-on";
import type { SingleSignOnRefusal } from "@/lib/domain/tenancy/single-sign-on";

export const metadata: Metadata = { title: "Sign-in refused" };

const REASONS: Record<SingleSignOnRefusal, { title: string; body: (provider: string) => string }> = {
  email_unverified: {
    title: "Your email address is not verified",
    body: (provider) =>
      `${provider} did not confirm that the email address of your account there is verified, so Run Custody cannot tell that it is yours. Verify it at ${provider}, then sign in again. You were not signed in and no workspace was joined.`,
  },
  email_missing: {
    title: "No email address came with your sign-in",
    body: (provider) =>
      `${provider} did not share an email address, and workspaces invite people by email. Allow sharing your email with Run Custody at ${provider}, or ask its administrator. You were not signed in.`,
  },
  not_invited: {
    title: "No workspace has invited this email",
    body: () =>
      "Your identity provider vouched for your email, but no workspace on this server has an open invitation for it and it belongs to none (or its access was removed). Ask an owner or admin of your workspace to invite exactly this email address under Settings → Members, then sign in again. You were not signed in.",
  },
};

/**
 * The page a refused single sign-on lands on (decision 0041): why the identity provider's sign-in gave no session
 * and what to do. `?reason=` picks one of the fixed explanations; nothing from the address is shown.
 */
export default async function SignInRefusedPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { reason } = await searchParams;
  const known =
    typeof reason === "string" && Object.hasOwn(REASONS, reason) ? REASONS[reason as SingleSignOnRefusal] : null;
  const name = singleSignOnConfig()?.name ?? "your identity provider";
  const provider = name.charAt(0).toUpperCase() + name.slice(1);
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div
        className="w-full max-w-md rounded-lg border border-neutral-200 bg-white p-6 shadow-sm"
        data-testid="sign-in-refused"
      >
        <h1 className="text-lg font-semibold">{known ? known.title : "Sign-in refused"}</h1>
        <p className="mt-3 text-sm text-neutral-800">
          {known ? known.body(provider) : "Signing in with the identity provider was refused. You were not signed in."}
        </p>
        <p className="mt-4 text-sm">
          <Link href="/login" className="font-medium text-neutral-900 underline">
            Back to sign-in
          </Link>
        </p>
      </div>
    </main>
  );
}
