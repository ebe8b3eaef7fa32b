/**
 * An interruption exercise verifies only what it tested (docs/concepts.md#interruption-exercises, issue 24), over HTTP
 * against the built server: a covered layer turns `verified` only when every step that exercises it passed with
 * evidence of its own; a step that could not be done, or passed with only a note, leaves its layers as they were; a
 * step that was not as expected fails them. A new exercise at a demo runtime's point covers only the layers that point
 * can test, and its page says which.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ExerciseJson, LayerRow, MapView } from "@/lib/contract/maps";
import type { LayerResult } from "@/lib/domain/exercises/guide";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { auditRows } from "./support/stored-rows";
import { api, createTestTenant, newTaskId, rid, testDbForFile, type Auth, type FullTestTenant } from "./helpers";

const handle = testDbForFile();

type Step = ExerciseJson["steps"][number];

async function newMap(owner: Auth): Promise<MapView> {
  const res = await api(owner).post<MapView>("/api/v1/maps", {
    workflow: `verifies-${rid()}`,
    title: `Verifies ${rid()}`,
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function run(
  owner: Auth,
  map: MapView,
  point: string,
  steps: (ex: ExerciseJson) => Array<Partial<Step>>,
  outcome = "visible_stop",
  layers?: string[],
) {
  const created = await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.id}/exercises`, {
    interruption_point: point,
    ...(layers ? { layers } : {}),
  });
  expect(created.status, created.text).toBe(200);
  const ex = created.body;
  const url = `/api/v1/maps/${map.id}/exercises/${ex.id}`;
  const saved = await api(owner).request<ExerciseJson>("PATCH", url, {
    json: { steps: steps(ex).map((p, i) => ({ ...ex.steps[i]!, ...p })), revision: ex.revision },
  });
  expect(saved.status, saved.text).toBe(200);
  const done = await api(owner).post<{ exercise: ExerciseJson; layers: LayerRow[]; results: LayerResult[] }>(
    `${url}/complete`,
    { outcome, finding: "Revocation could not be exercised; the gate stopped on the unknown write.", revision: 2 },
  );
  expect(done.status, done.text).toBe(200);
  const after = (await api(owner).get<MapView>(`/api/v1/maps/${map.id}`)).body;
  const verification = Object.fromEntries(after.layers.map((l) => [l.layer, l.verification]));
  return { ex, done: done.body, after, verification };
}

describe("an exercise verifies only what it tested", () => {
  let t: FullTestTenant;
  let owner: Auth;
  let taskId: string;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
    taskId = newTaskId("verifies");
    await checkpoint(t, taskId);
  });

  it("Test revocation 'could not be done' with a visible stop leaves Credentials unknown (the tried case)", async () => {
    const map = await newMap(owner);
    const { ex, done, after, verification } = await run(owner, map, "after_external_write", () => [
      { status: "passed", note: "Expected: one update." },
      { status: "passed", task_id: taskId },
      { status: "passed", task_id: taskId },
      { status: "passed", task_id: taskId },
      { status: "passed", task_id: taskId },
      { status: "blocked", note: "Revocation could not be exercised." },
    ]);
    expect(verification.credentials).toBe("unknown");
    expect(after.layers.find((l) => l.layer === "credentials")!.verification_evidence).toBeNull();
    expect(done.results.find((r) => r.layer === "credentials")).toMatchObject({
      verification: null,
      why: expect.stringMatching(/Test revocation.*could not be done/),
    });
    for (const layer of ["session_state", "tools", "compute", "artifacts", "recovery", "export"])
      expect(verification[layer], layer).toBe("verified");
    expect(verification.compaction).toBe("unknown");
    expect(done.layers.map((l) => l.layer)).not.toContain("credentials");
    // The point can test every layer but Compaction, so the new exercise covers those.
    expect(ex.layers).toEqual(["session_state", "tools", "compute", "credentials", "artifacts", "recovery", "export"]);
    const [audit] = (await auditRows(handle.db, t.tenantId, "exercise.completed")).slice(-1);
    expect((audit!.details as { results: LayerResult[] }).results).toContainEqual(
      expect.objectContaining({ layer: "credentials", verification: null }),
    );
  });

  it("every step→layer mapping: a note alone or a blocked step leaves its layers, a failed step fails them", async () => {
    const map = await newMap(owner);
    const { verification, done } = await run(
      owner,
      map,
      "after_intent",
      () => [
        { status: "passed" },
        { status: "passed", task_id: taskId },
        { status: "passed", note: "The sandbox went away." },
        { status: "failed", task_id: taskId, note: "The write was retried without a lookup." },
        { status: "blocked", note: "No export." },
        { status: "passed", task_id: taskId, note: "Revoked, we think." },
      ],
      "visible_stop",
      ["session_state", "compaction", "tools", "compute", "credentials", "artifacts", "recovery", "export"],
    );
    expect(verification).toMatchObject({
      session_state: "verified", // establish_checkpoint passed with its task
      compaction: "failed", // resume_and_reconcile was not as expected
      tools: "failed",
      recovery: "failed",
      compute: "unknown", // interrupt passed with a note only
      credentials: "unknown", // test_revocation passed without the revocation check it relied on
      artifacts: "unknown", // retrieve_and_export could not be done
      export: "unknown",
    });
    expect(done.results.find((r) => r.layer === "credentials")!.why).toMatch(/links no revocation check/);
    expect(done.results.find((r) => r.layer === "compute")!.why).toMatch(/links no task, artifact digest or event/);
  });

  it("a new exercise at a point covers only what the point can test, and its page says which", async () => {
    const map = await newMap(owner);
    const created = await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.id}/exercises`, {
      interruption_point: "after_receipt",
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.layers).toEqual(["session_state", "compute", "credentials", "artifacts", "recovery", "export"]);
    const page = await api(owner).get(`/maps/${map.id}/exercises/${created.body.id}`);
    expect(page.status).toBe(200);
    const part = (page.text.split('data-testid="point-layers"')[1] ?? "").split("</div>")[0]!;
    expect(part).toContain("can test");
    expect(part).toMatch(/Not <!-- -->?Tools/);
    expect(part).toMatch(/Not <!-- -->?Compaction/);
    // An unknown point keeps every layer a step exercises: the page asks to cover only what it can test.
    const custom = await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.id}/exercises`, {
      interruption_point: "mid_compaction",
    });
    expect(custom.body.layers).toHaveLength(8);
  });
});

describe("the exercise page's commands tell the truth", () => {
  it("the running-server command writes to the records service the workspace looks up, or says the lookup cannot see it", async () => {
    const t = await createTestTenant(handle.db);
    const owner = await signInAs(t, "owner");
    const map = await newMap(owner);
    const ex = (
      await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.id}/exercises`, {
        interruption_point: "after_external_write",
      })
    ).body;
    const commands = async () => {
      const html = (await api(owner).get(`/maps/${map.id}/exercises/${ex.id}`)).text.replace(/<!-- -->/g, "");
      const part = (html.split('data-testid="run-for-real"')[1] ?? "").split("</section>")[0]!;
      return { part, note: (part.split('data-testid="run-lookup-note"')[1] ?? "").split("</p>")[0]! };
    };
    // No lookup registered: the command starts its own records service, and the page says the lookup cannot see it.
    const none = await commands();
    expect(none.part).not.toContain("RECORDS_URL=http");
    expect(none.note).toMatch(/no lookup for .*update_record/);
    expect(none.note).toContain("cannot see");
    // With the workspace's lookup: the command writes to that records service.
    const put = await api(owner).request("PUT", "/api/v1/settings/lookups/update_record", {
      json: { url: "http://127.0.0.1:45111/lookup" },
    });
    expect(put.status, put.text).toBe(200);
    const set = await commands();
    expect(set.part).toContain("RECORDS_URL=http://127.0.0.1:45111 CUSTODY_URL=");
    expect(set.note).toContain("sees its writes");
  });
});
