import { NextResponse } from "next/server";

/** Any unknown /api path answers a JSON 404 in the API's error shape, not an HTML page. */
function notFound(req: Request) {
  const path = new URL(req.url).pathname;
  return NextResponse.json(
    {
      error: {
        code: "not_found",
        message: `No API route ${req.method} ${path}. See /api/v1/openapi.json for the routes.`,
      },
    },
    { status: 404 },
  );
}

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
