import type { Metadata } from "next";
import { getDb } from "@/db";
import { hasWorkspace, SETUP_COMMAND } from "@/lib/domain/tenancy/setup";
import { safeLocalPath } from "@/lib/domain/web/safe-path";
import { LoginForm } from "./LoginForm";

export const metadata: Metadata = { title: "Sign in" };

/**
 * Sign-in page: email + password. On a database that has no workspace yet nobody could sign in, so it says how
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
            <LoginForm callbackUrl={callbackUrl} />
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
