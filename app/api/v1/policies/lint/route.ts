import { authorize } from "@/lib/domain/authz";
import { lintPolicyText } from "@/lib/domain/policies/lint";
import { readPolicyRequest } from "@/lib/domain/policies/read-request";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/policies/lint — body: a policy document as JSON (`content-type: application/json`) or YAML
 * (`content-type: application/yaml`) → 200 `{"valid": boolean, "findings": [{"severity": "error"|"warning",
 * "rule", "path", "message"}]}` (`path` like `credentials[0].allowed_hosts[0]`; rules in lib/domain/policies/lint.ts,
 * docs/concepts.md#policy-versions-and-lint). Stores nothing. Runtime API keys (lint in your own CI) and every
 * signed-in role.
 * Errors: 400 (not JSON/YAML), 401, 403, 413, 415 (another content type), 422 (reserved keys, a credential value).
 */
export const POST = apiRoute(async ({ req, ctx }) => {
  authorize(ctx.actor, "policies.lint");
  const { text, format } = await readPolicyRequest(req);
  const { valid, findings } = lintPolicyText(text, format);
  return { valid, findings };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
