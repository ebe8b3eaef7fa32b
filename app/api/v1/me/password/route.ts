import { changePassword } from "@/lib/domain/tenancy/account";
import { clientAddress } from "@/lib/server/client-address";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * POST /api/v1/me/password body `{"current_password", "new_password"}` → `{changed: true, sessions_ended, audit_seq}`:
 * changes the signed-in person's password (argon2id) and ends their other sessions. Sessions only (403 for a
 * runtime key); 422 naming the field (a wrong current password names `current_password`; new password rules);
 * 429 when the sign-in throttle refuses.
 */
export const POST = apiRoute(async ({ req, ctx }) =>
  changePassword(ctx, { body: await readJson(req), source: clientAddress(req.headers) }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
