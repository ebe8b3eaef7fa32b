import { readPolicyRequest } from "@/lib/domain/policies/read-request";
import { listPolicyVersions, storePolicyVersion } from "@/lib/domain/policies/store";
import { apiRoute, otherMethods } from "@/lib/server/route";
import { NextResponse } from "next/server";

/**
 * GET /api/v1/policies → `{"policies": [{"version", "digest", "valid", "created_by", "created_at", "active",
 * "activated_at"}]}`, newest first. Every role and runtime keys. Errors: 401.
 */
export const GET = apiRoute(async ({ ctx }) => ({ policies: await listPolicyVersions(ctx) }));

/**
 * POST /api/v1/policies — body: a policy document, JSON (`content-type: application/json`) or YAML
 * (`application/yaml`) → 201 `{"version", "digest", "valid", "findings"}`; the same document again → 200 with the
 * version it already has. A document with lint errors is stored but cannot be activated. Owners and admins.
 * Errors: 400, 401, 403, 413, 415, 422 (reserved keys, a credential value: nothing stored).
 */
export const POST = apiRoute(async ({ req, ctx }) => {
  const input = await readPolicyRequest(req);
  const out = await storePolicyVersion(ctx, input);
  const { created, ...body } = out;
  return NextResponse.json(body, { status: created ? 201 : 200 });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
