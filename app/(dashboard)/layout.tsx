import { Providers } from "@/components/Providers";
import { NavLinks } from "@/components/NavLinks";
import { IntentLink } from "@/components/ui/IntentLink";
import { SignOutButton } from "@/components/SignOutButton";
import { WorkspaceSwitcher } from "@/components/WorkspaceSwitcher";
import { listWorkspaces } from "@/lib/domain/tenancy/account";
import { approvalQueue } from "@/lib/domain/approvals/read";
import { requirePageContext } from "@/lib/server/page-actor";

/** Every dashboard page needs a session with an active membership; otherwise → /login. */
export default async function DashboardLayout({ children }: { children: React.ReactNode }) {
  const ctx = await requirePageContext();
  const { actor, db } = ctx;
  const [workspaces, waiting] = await Promise.all([
    listWorkspaces(db, actor.userId, actor.tenantId),
    approvalQueue(ctx, { scan: 500 }),
  ]);
  return (
    <Providers>
      <div className="flex min-h-screen flex-col">
        <header className="border-b border-neutral-200 bg-white print:hidden">
          <div className="mx-auto flex max-w-screen-2xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-2">
            <IntentLink href="/tasks" className="text-sm font-semibold tracking-tight">
              Run Custody
            </IntentLink>
            <NavLinks approvals={waiting.length} />
            <div className="ml-auto flex items-center gap-3 text-sm text-neutral-600">
              <WorkspaceSwitcher workspaces={workspaces} />
              <IntentLink
                href="/account"
                className="rounded bg-neutral-100 px-2 py-0.5 text-xs hover:bg-neutral-200"
                data-testid="current-user"
                title="Your account"
              >
                {actor.email} · {actor.role}
              </IntentLink>
              <SignOutButton />
            </div>
          </div>
        </header>
        <main className="mx-auto w-full max-w-screen-2xl flex-1 px-4 py-5">{children}</main>
      </div>
    </Providers>
  );
}
