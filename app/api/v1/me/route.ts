import { accountFor } from "@/lib/domain/tenancy/account";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/me → `{user_id, email, name, role, workspace: {tenant_id, slug, name, role, current}, workspaces: [...]}`:
 * the signed-in person, the workspace this session works in, and every workspace they may switch to. Sessions
 * only (a runtime key gets 403).
 */
export const GET = apiRoute(async ({ ctx }) => accountFor(ctx));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
