import { NextResponse } from "next/server";
import { openApiDocument } from "@/lib/server/openapi";

export const dynamic = "force-dynamic";

/** GET /api/v1/openapi.json → the OpenAPI 3.1 description of the runtime API (public). */
export async function GET() {
  return NextResponse.json(openApiDocument());
}
