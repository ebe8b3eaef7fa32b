/**
 * Bundles in the worksheet (decision 0038), over the real HTTP API on PostgreSQL: the exercise's "retrieve the result
 * and export" step (`POST /api/v1/maps/{id}/exercises/{exerciseId}/export`) builds, verifies and records the linked
 * task's bundle and writes its digest and result into the step (other roles 403, another workspace 404); the adoption
 * summary says whether the Export layer's bundle was verified; a workspace export is recorded as built but not
 * verified, its sha256 that of the bytes downloaded, and can be linked — but not as a verified layer.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { expect, inject, it } from "vitest";
import { queryRows } from "@/db";
import type { ExerciseJson, LayerRow, MapView } from "@/lib/contract/maps";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, testDbForFile } from "./helpers";

const handle = testDbForFile();

type Auth = { cookie: string };

function patchLayer(auth: Auth, mapId: string, layer: string, body: unknown) {
  return api(auth).request<{ row: LayerRow }>("PATCH", `/api/v1/maps/${mapId}/layers/${layer}`, { json: body });
}

async function recorded(tenantId: string, digest: string) {
  const [row] = await queryRows<{ scope: string; task_id: string | null; size_bytes: number; verification: unknown }>(
    handle.db,
    sql`select scope, task_id, size_bytes::float8 as size_bytes, verification from export_bundles
        where tenant_id = ${tenantId} and digest = ${digest}`,
  );
  return row;
}

it("the exercise's export step builds, verifies and records the task's bundle; the summary says it was verified", async () => {
  const t = await createTestTenant(handle.db);
  const other = await createTestTenant(handle.db, { roles: ["owner"] });
  const owner = await signInAs(t, "owner");
  const taskId = newTaskId("ex-export");
  expect((await postEvents(t.apiKey, [makeEvent(taskId, { type: "task.created" })])).status).toBe(200);
  await checkpoint(t, taskId, { phase: "working" });

  const map = (await api(owner).post<MapView>("/api/v1/maps", { workflow: "export-step", title: "Export step" })).body;
  const ex = (
    await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.id}/exercises`, {
      interruption_point: "after_intent",
      layers: ["export"],
    })
  ).body;
  const url = `/api/v1/maps/${map.id}/exercises/${ex.id}/export`;

  // No task linked to the step yet: 422 naming the step's task, nothing recorded.
  const unlinked = await api(owner).post(url, {});
  expectError(unlinked, 422, "validation_failed");
  const index = ex.steps.findIndex((s) => s.step === "retrieve_and_export");
  expect(JSON.stringify(errorOf(unlinked).details)).toContain(`steps.${index}.task_id`);

  const steps = ex.steps.map((s) => (s.step === "retrieve_and_export" ? { ...s, task_id: taskId } : s));
  const linked = await api(owner).request<ExerciseJson>("PATCH", `/api/v1/maps/${map.id}/exercises/${ex.id}`, {
    json: { steps, revision: ex.revision },
  });
  expect(linked.status, linked.text).toBe(200);

  for (const role of ["viewer", "responder", "approver"] as const) {
    expectError(await api(await signInAs(t, role)).post(url, {}), 403, "forbidden");
  }
  expectError(await api(await signInAs(other, "owner")).post(url, {}), 404, "not_found");
  const [{ n: before }] = (await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from export_bundles where tenant_id = ${t.tenantId}`,
  )) as [{ n: number }];
  expect(before).toBe(0);

  const res = await api(owner).post<{ exercise: ExerciseJson; first_failure: unknown }>(url, {});
  expect(res.status, res.text).toBe(200);
  expect(res.body.first_failure).toBeNull();
  const step = res.body.exercise.steps.find((s) => s.step === "retrieve_and_export")!;
  expect(step.task_id).toBe(taskId);
  expect(step.bundle_digest).toMatch(/^[0-9a-f]{64}$/);
  expect(step.bundle_verified).toBe(true);
  const row = await recorded(t.tenantId, step.bundle_digest!);
  expect(row).toMatchObject({ scope: "task", task_id: taskId, verification: { ok: true, first_failure: null } });
  expect(row!.size_bytes).toBeGreaterThan(0);
  // The step as stored says the same.
  const read = await api(owner).get<ExerciseJson>(`/api/v1/maps/${map.id}/exercises/${ex.id}`);
  expect(read.body.steps.find((s) => s.step === "retrieve_and_export")).toMatchObject({
    bundle_digest: step.bundle_digest,
    bundle_verified: true,
  });

  // Linked on the Export layer as a verified layer, the adoption summary says the export was verified.
  const layer = (await api(owner).get<MapView>(`/api/v1/maps/${map.id}`)).body.layers.find(
    (l) => l.layer === "export",
  )!;
  const patched = await patchLayer(owner, map.id, "export", {
    verification: "verified",
    verification_evidence: { kind: "bundle", ref: step.bundle_digest },
    revision: layer.revision,
  });
  expect(patched.status, patched.text).toBe(200);
  expect(patched.body.row.verification_evidence).toMatchObject({ kind: "bundle", bundle_verified: true });
  const after = (await api(owner).get<MapView>(`/api/v1/maps/${map.id}`)).body;
  expect(after.summary.export_bundle).toBe("verified");
  expect(after.summary.export_line).toContain("passed offline verification");
});

it("a workspace export is recorded with the sha256 of the bytes served, as built but not verified", async () => {
  const t = await createTestTenant(handle.db);
  const owner = await signInAs(t, "owner");
  const taskId = newTaskId("ws-rec");
  expect((await postEvents(t.apiKey, [makeEvent(taskId, { type: "task.created" })])).status).toBe(200);

  const res = await fetch(`${inject("baseUrl")}/api/v1/export`, { headers: { cookie: owner.cookie } });
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  const digest = createHash("sha256").update(bytes).digest("hex");
  const row = await recorded(t.tenantId, digest);
  expect(row).toEqual({
    scope: "workspace",
    task_id: null,
    size_bytes: bytes.length,
    verification: { ok: null, checks: 0, first_failure: null },
  });

  const map = (await api(owner).post<MapView>("/api/v1/maps", { workflow: "ws-export", title: "Leave" })).body;
  const layer = map.layers.find((l) => l.layer === "export")!;
  // Not verified by the server, so it cannot back a verified layer …
  const refused = await patchLayer(owner, map.id, "export", {
    verification: "verified",
    verification_evidence: { kind: "bundle", ref: digest },
    revision: layer.revision,
  });
  expectError(refused, 422, "validation_failed");
  expect(JSON.stringify(errorOf(refused).details)).toContain("not verified");
  // … but it is linked as evidence, and the summary says it has not been verified.
  const linked = await patchLayer(owner, map.id, "export", {
    verification_evidence: { kind: "bundle", ref: digest },
    revision: layer.revision,
  });
  expect(linked.status, linked.text).toBe(200);
  expect(linked.body.row.verification_evidence).toMatchObject({ kind: "bundle", ref: digest, bundle_verified: null });
  const after = (await api(owner).get<MapView>(`/api/v1/maps/${map.id}`)).body;
  expect(after.summary.export_bundle).toBe("unverified");
  expect(after.summary.export_line).toContain("has not been verified");
});
