/**
 * The lean layer's route table (lib/server/lean/hot-routes.ts): every entry is an App Router route of app/ (so its
 * handler, auth and OpenAPI entry are that route file's), and request paths match as Next matches them.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HOT_ROUTES, matchHotRoute } from "@/lib/server/lean/hot-routes";

describe("hot routes", () => {
  it.each(HOT_ROUTES.map((r) => r.route))("%s is a route file of app/", (route) => {
    expect(fs.existsSync(path.join(process.cwd(), "app", ...route.split("/").slice(1), "route.ts"))).toBe(true);
  });

  it("matches a path, decoding parameters as Next does, and shows the handler the request's own path", () => {
    expect(matchHotRoute("/api/v1/tasks/t%201/side-effects/update_record/intent")).toEqual({
      route: "/api/v1/tasks/[taskId]/side-effects/[name]/intent",
      params: { taskId: "t 1", name: "update_record" },
      path: "/api/v1/tasks/t%201/side-effects/update_record/intent",
    });
    expect(matchHotRoute("/api/v1/events")).toEqual({ route: "/api/v1/events", params: {}, path: "/api/v1/events" });
  });

  it("shows an alias as the route's own path, as Next's rewrite does", () => {
    expect(matchHotRoute("/v1/traces/ingest")).toEqual({
      route: "/api/v1/traces/ingest",
      params: {},
      path: "/api/v1/traces/ingest",
    });
  });

  it.each([
    "/api/v1/tasks/%E0%A4%A/resume",
    "/api/v1/tasks//resume",
    "/api/v1/tasks/t1/timeline",
    "/api/v1/tasks/t1/resume/",
    "/api/v1/events/x",
    "/api/v1/tasks",
    "/tasks/t1",
  ])("leaves %s to Next", (p) => {
    expect(matchHotRoute(p)).toBeNull();
  });
});
