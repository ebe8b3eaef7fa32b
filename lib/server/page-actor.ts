/**
 * Session check for pages: the signed-in person with an active membership, else a redirect to /login that
 * brings them back to the page they asked for (path from proxy.ts's `x-custody-path` header); and the verb context
 * pages pass to domain verbs.
 */
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { dbFor } from "@/db";
import type { UserActor } from "@/lib/domain/authz";
import type { VerbContext } from "@/lib/domain/context";
import { safeLocalPath } from "@/lib/domain/web/safe-path";
import { currentUser } from "./actor";

/**
 * @returns the user actor; redirects to `/login?callbackUrl=<path>` when there is none. Checked once per request
 * (React `cache`): the layout and the page both ask, and each check decodes the cookie and reads the session.
 */
export const requirePageActor = cache(async (): Promise<UserActor> => {
  const user = await currentUser();
  if (!user) {
    const asked = (await headers()).get("x-custody-path");
    const path = safeLocalPath(asked);
    redirect(`/login?callbackUrl=${encodeURIComponent(path)}`);
  }
  return user;
});

/**
 * The verb context of a page: the signed-in person ({@link requirePageActor}, same redirect) and the database walled
 * to their workspace and to them (docs/decisions/0016-tenant-walls.md). Built once per request.
 */
export const requirePageContext = cache(async (): Promise<VerbContext<UserActor>> => {
  const actor = await requirePageActor();
  return { db: await dbFor(actor), actor };
});
