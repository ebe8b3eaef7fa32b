/**
 * Dashboard pages over HTTP with a real session: a task page answers 200 for the tenant's own task and a real
 * 404 (with the not-found page and a way back to the list) for a task id it does not have, including another
 * tenant's task.
 */
import { describe, expect, it } from "vitest";
import { api, baseUrl, createTestTenant, makeRecord, newTaskId, signIn, testDbForFile } from "./helpers";

const handle = testDbForFile();

/**
 * A 404 with the task segment's not-found page. Next sends the error shell and the not-found tree in its RSC
 * payload (the browser renders it; e2e/readability.spec.ts checks what a person sees), never the task page.
 */
function expectTaskNotFound(res: { status: number; text: string }) {
  expect(res.status).toBe(404);
  expect(res.text).toContain("NEXT_HTTP_ERROR_FALLBACK;404");
  expect(res.text).toContain("Task not found");
  expect(res.text).toContain("Back to tasks");
  expect(res.text).not.toContain('data-testid="task-id"');
}

describe("the task page", () => {
  it("answers 200 for the tenant's task and 404 with the not-found page for an id it does not have", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const other = await createTestTenant(handle.db, { roles: [] });
    const mine = newTaskId("page-mine");
    const theirs = newTaskId("page-theirs");
    expect((await api(t.apiKey).put(`/api/v1/tasks/${mine}`, makeRecord(mine))).status).toBe(200);
    expect((await api(other.apiKey).put(`/api/v1/tasks/${theirs}`, makeRecord(theirs))).status).toBe(200);
    const session = { cookie: await signIn(t.users.responder!.email, t.password) };

    const ok = await api(session).get(`/tasks/${mine}`);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain(`data-testid="task-id">${mine}<`);
    expect(ok.text).not.toContain("NEXT_HTTP_ERROR_FALLBACK;404");

    expectTaskNotFound(await api(session).get("/tasks/nope"));
    expectTaskNotFound(await api(session).get(`/tasks/${theirs}`));
  });
});

describe("static files of public/", () => {
  it("serves the favicon and robots.txt to anyone, signed in or not, and asks crawlers to stay out", async () => {
    const icon = await fetch(`${baseUrl()}/favicon.ico`, { redirect: "manual" });
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toMatch(/icon/);
    const robots = await api().get("/robots.txt");
    expect(robots.status).toBe(200);
    expect(robots.text).toContain("Disallow: /");
  });
});
