import { NextResponse } from "next/server";
import { getSigningKey } from "@/lib/config/signing-key";
import { publicJwk } from "@/lib/domain/crypto/signing";
import { otherMethods } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/signing-keys → `{"keys": [PublicJwk]}` (a JWK Set, RFC 7517 §5): the Ed25519 public keys that
 * verify checkpoint signatures. Public: verifying needs no credentials.
 */
export async function GET() {
  return NextResponse.json({ keys: [publicJwk(getSigningKey())] });
}

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
