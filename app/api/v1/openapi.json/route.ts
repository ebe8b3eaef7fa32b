import { NextResponse } from "next/server";
import { openApiDocument } from "@/lib/server/openapi";
import { otherMethods } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** GET /api/v1/openapi.json → the OpenAPI 3.1 description of the runtime API (public). */
export async function GET() {
  return NextResponse.json(openApiDocument());
}

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
