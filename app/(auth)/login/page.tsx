import type { Metadata } from "next";
import { safeLocalPath } from "@/lib/domain/web/safe-path";
import { LoginForm } from "./LoginForm";

export const metadata: Metadata = { title: "Sign in" };

/** Sign-in page: email + password. */
export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const callbackUrl = safeLocalPath(sp.callbackUrl);
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm rounded-lg border border-neutral-200 bg-white p-6 shadow-sm">
        <h1 className="text-lg font-semibold">Run Custody</h1>
        <p className="mt-1 text-sm text-neutral-600">Sign in to review runs, reconcile side effects and answer the resume gate.</p>
        <LoginForm callbackUrl={callbackUrl} />
      </div>
    </main>
  );
}
