import type { Metadata } from "next";
import { getDb } from "@/db";
import { SINGLE_SIGN_ON_PROVIDER_ID, singleSignOnConfig } from "@/lib/config/single-sign-on";
import { hasWorkspace, SETUP_COMMAND } from "@/lib/domain/tenancy/setup";
import { safeLocalPath } from "@/lib/domain/web/safe-path";
import { LoginForm } from "./LoginForm";
import { SingleSignOnButton } from "./SingleSignOnButton";

export const metadata: Metadata = { title: "Sign in" };

/**
 * What next-auth's error codes (`?error=`, after a failed provider sign-in) mean to the person. The id token checks
 * (signature, audience, issuer, expiry, nonce) all end as `OAuthCallback`.
 */
const PROVIDER_ERRORS: Record<string, string> = {
  OAuthCallback:
    "The identity provider's answer could not be verified (its signature, audience or expiry was not right), so you were not signed in. Try again; if it keeps failing, tell the server's operator.",
  OAuthSignin: "The identity provider could not be reached to start signing in. Try again later.",
  Callback: "Signing in with the identity provider failed. Try again.",
  AccessDenied: "The identity provider did not let you sign in.",
};

/**
 * Sign-in page: email + password, and "Sign in with <provider>" when single sign-on is configured (decision 0041),
 * with the reason when a provider sign-in failed. On a database that has no workspace yet nobody could sign in, so it says how
 * to create the first one instead of showing the form.
 */
export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const sp = await searchParams;
  const callbackUrl = safeLocalPath(sp.callbackUrl);
  const ready = await hasWorkspace(await getDb());
  const sso = singleSignOnConfig();
  const errorCode = typeof sp.error === "string" ? sp.error : undefined;
  const providerError = errorCode ? PROVIDER_ERRORS[errorCode] : undefined;
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div
        className={`w-full ${ready ? "max-w-sm" : "max-w-xl"} rounded-lg border border-neutral-200 bg-white p-6 shadow-sm`}
      >
        <h1 className="text-lg font-semibold">Run Custody</h1>
        {ready ? (
          <>
            <p className="mt-1 text-sm text-neutral-600">
              Sign in to review runs, reconcile side effects and answer the resume gate.
            </p>
            {providerError ? (
              <p
                role="alert"
                data-testid="provider-error"
                className="mt-4 rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800"
              >
                {providerError}
              </p>
            ) : null}
            <LoginForm callbackUrl={callbackUrl} />
            {sso ? (
              <div className="mt-4 border-t border-neutral-200 pt-4">
                <SingleSignOnButton
                  providerId={SINGLE_SIGN_ON_PROVIDER_ID}
                  providerName={sso.name}
                  callbackUrl={callbackUrl}
                />
              </div>
            ) : null}
          </>
        ) : (
          <div data-testid="setup-needed" className="mt-3 space-y-3 text-sm text-neutral-800">
            <p className="font-medium">This server has no workspace yet, so nobody can sign in.</p>
            <p>
              Create the first workspace and its owner on the server, with the same database settings it runs with (on
              the embedded database, stop the server first: one process uses a data directory at a time):
            </p>
            <pre
              className="overflow-x-auto rounded-md bg-neutral-900 px-3 py-2 font-mono text-xs text-white"
              data-testid="setup-command"
            >
              {SETUP_COMMAND}
            </pre>
            <p>
              It prints a one-time link for the owner to set their password (or set{" "}
              <code className="font-mono">CUSTODY_SETUP_PASSWORD</code> to choose it). Then reload this page. The
              README&apos;s “Running it yourself” section walks through it.
            </p>
          </div>
        )}
      </div>
    </main>
  );
}
