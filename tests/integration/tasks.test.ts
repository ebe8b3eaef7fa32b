/**
 * Task records over HTTP: signed checkpoints that verify with the published key, versioned history,
 * validation that writes nothing, task list and timeline pagination, artifacts.
 */
import { describe, expect, it } from "vitest";
import type {
  ApiErrorBody,
  ArtifactView,
  CheckpointResult,
  CheckpointSummary,
  TaskList,
  TaskRecord,
  TaskView,
  TimelinePage,
} from "@/lib/contract/api";
import { canonicalDigest } from "@/lib/domain/crypto/canonical";
import { verifyCanonical, type PublicJwk } from "@/lib/domain/crypto/signing";
import {
  api,
  countRows,
  createTestTenant,
  makeEvent,
  makeRecord,
  newTaskId,
  postEvents,
  testDbForFile,
} from "./helpers";

const handle = testDbForFile();

type Checkpoints = { checkpoints: Array<CheckpointSummary & { record: TaskRecord }> };

async function signingKeys(): Promise<PublicJwk[]> {
  const res = await api().get<{ keys: PublicJwk[] }>("/api/v1/signing-keys");
  expect(res.status).toBe(200);
  expect(res.body.keys.length).toBeGreaterThan(0);
  return res.body.keys;
}

describe("PUT /api/v1/tasks/{id}", () => {
  it("checkpoints signed versions that verify against the published key and keeps the history", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const record1 = makeRecord(taskId);
    const put1 = await api(t.apiKey).put<CheckpointResult>(`/api/v1/tasks/${taskId}`, record1);
    expect(put1.status).toBe(200);
    expect(put1.body).toEqual({
      task_id: taskId,
      version: 1,
      digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      signature: expect.stringMatching(/^[A-Za-z0-9_-]{86}$/),
      key_id: expect.any(String),
      attempt: 1,
    });
    expect(put1.body.digest).toBe(canonicalDigest(record1));

    const [jwk] = await signingKeys();
    expect(jwk).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA" });
    expect(verifyCanonical(record1, put1.body.signature, jwk!, put1.body.digest)).toBe(true);
    // a changed record does not verify against the same signature
    expect(verifyCanonical({ ...record1, phase: "other" }, put1.body.signature, jwk!)).toBe(false);

    const view1 = await api(t.apiKey).get<TaskView>(`/api/v1/tasks/${taskId}`);
    expect(view1.body).toMatchObject({ version: 1, digest: put1.body.digest, signature_valid: true, record: record1 });
    expect(verifyCanonical(view1.body.record, put1.body.signature, jwk!, put1.body.digest)).toBe(true);

    const record2 = makeRecord(taskId, {
      phase: "writing",
      decisions: [...record1.decisions, { id: "d2", summary: "Write the report." }],
    });
    const put2 = await api(t.apiKey).put<CheckpointResult>(`/api/v1/tasks/${taskId}`, record2);
    expect(put2.status).toBe(200);
    expect(put2.body.version).toBe(2);
    expect(put2.body.digest).not.toBe(put1.body.digest);
    expect(verifyCanonical(record2, put2.body.signature, jwk!, put2.body.digest)).toBe(true);

    const history = await api(t.apiKey).get<Checkpoints>(`/api/v1/tasks/${taskId}/checkpoints`);
    expect(history.status).toBe(200);
    expect(history.body.checkpoints.map((c) => [c.version, c.digest, c.signature_valid, c.phase])).toEqual([
      [2, put2.body.digest, true, "writing"],
      [1, put1.body.digest, true, "reading"],
    ]);
    expect(history.body.checkpoints[1]!.record).toEqual(record1);

    const view2 = await api(t.apiKey).get<TaskView>(`/api/v1/tasks/${taskId}`);
    expect(view2.body).toMatchObject({ version: 2, phase: "writing", signature_valid: true });
  });

  it.each([
    {
      name: "an unknown field",
      mutate: (r: TaskRecord) => ({ ...r, container_handle: "docker://abc123" }),
      expectInMessage: "container_handle",
    },
    {
      name: "an unknown nested field",
      mutate: (r: TaskRecord) => ({ ...r, inputs: [{ ...r.inputs[0]!, shell_state: "cwd=/tmp" }] }),
      expectInMessage: "inputs.0",
    },
    {
      name: "a task_id other than the URL's",
      mutate: (r: TaskRecord) => ({ ...r, task_id: `${r.task_id}-other` }),
      expectInMessage: "task_id",
    },
    {
      name: "an API key in a decision summary",
      mutate: (r: TaskRecord) => ({
        ...r,
        decisions: [{ id: "d9", summary: "Used sk-live-0123456789abcdefABCDEF0123 to call the model" }],
      }),
      expectInMessage: "decisions[0].summary",
    },
    {
      name: "a bad artifact digest",
      mutate: (r: TaskRecord) => ({ ...r, artifacts: [{ ref: "s3://x", sha256: "not-a-digest" }] }),
      expectInMessage: "artifacts.0.sha256",
    },
  ])("answers 422 naming the field for $name and writes nothing", async ({ mutate, expectInMessage }) => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    expect((await api(t.apiKey).put(`/api/v1/tasks/${taskId}`, makeRecord(taskId))).status).toBe(200);
    const counts = async () => ({
      checkpoints: await countRows(handle.db, "task_checkpoints", t.tenantId),
      artifacts: await countRows(handle.db, "artifacts", t.tenantId),
      sideEffects: await countRows(handle.db, "side_effects", t.tenantId),
      audit: await countRows(handle.db, "audit_log", t.tenantId),
      tasks: await countRows(handle.db, "tasks", t.tenantId),
    });
    const before = await counts();

    const res = await api(t.apiKey).put<ApiErrorBody>(`/api/v1/tasks/${taskId}`, mutate(makeRecord(taskId)));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.message).toContain(expectInMessage);

    expect(await counts()).toEqual(before);
    const view = await api(t.apiKey).get<TaskView>(`/api/v1/tasks/${taskId}`);
    expect(view.body.version).toBe(1);
    expect(view.body.phase).toBe("reading");
  });

  it("writes nothing for a rejected record of a task that does not exist yet", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const res = await api(t.apiKey).put<ApiErrorBody>(`/api/v1/tasks/${taskId}`, { ...makeRecord(taskId), extra: 1 });
    expect(res.status).toBe(422);
    expect(await countRows(handle.db, "tasks", t.tenantId)).toBe(0);
    expect((await api(t.apiKey).get(`/api/v1/tasks/${taskId}`)).status).toBe(404);
  });

  it("lists the artifacts of the record", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const record = makeRecord(taskId, {
      artifacts: [
        { ref: "s3://out/report.md", sha256: "c".repeat(64), size: 2048, media_type: "text/markdown" },
        { ref: "s3://out/summary.json", sha256: "d".repeat(64) },
      ],
    });
    expect((await api(t.apiKey).put(`/api/v1/tasks/${taskId}`, record)).status).toBe(200);
    const res = await api(t.apiKey).get<{ artifacts: ArtifactView[] }>(`/api/v1/tasks/${taskId}/artifacts`);
    expect(res.status).toBe(200);
    const byRef = Object.fromEntries(res.body.artifacts.map((a) => [a.ref, a]));
    expect(Object.keys(byRef).sort()).toEqual(["s3://out/report.md", "s3://out/summary.json"]);
    expect(byRef["s3://out/report.md"]).toMatchObject({
      sha256: "c".repeat(64),
      size: 2048,
      media_type: "text/markdown",
      first_version: 1,
    });
    expect(byRef["s3://out/summary.json"]).toMatchObject({
      sha256: "d".repeat(64),
      size: null,
      media_type: null,
      first_version: 1,
    });
  });
});

describe("GET /api/v1/tasks", () => {
  it("pages newest first with a cursor, without overlap", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      const taskId = newTaskId(`page${i}`);
      // one request per task, so each task gets its own creation time
      expect((await postEvents(t.apiKey, [makeEvent(taskId)])).body.results[0]!.status).toBe("stored");
      created.push(taskId);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const qs: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : "?limit=3";
      const res = await api(t.apiKey).get<TaskList>(`/api/v1/tasks${qs}`);
      expect(res.status).toBe(200);
      expect(res.body.tasks.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.tasks.map((x) => x.task_id));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...created].reverse());
    expect(new Set(seen).size).toBe(seen.length);

    const bad = await api(t.apiKey).get<ApiErrorBody>("/api/v1/tasks?cursor=not-a-cursor");
    expect(bad.status).toBe(400);
  });

  it("pages tasks created at the same moment (one batch) by task id, without loss or overlap", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const ids = ["same-a", "same-b", "same-c", "same-d", "same-e"].map((p) => `${p}-${newTaskId("x")}`);
    const res = await postEvents(
      t.apiKey,
      ids.map((id) => makeEvent(id)),
    );
    expect(res.body.results.every((r) => r.status === "stored")).toBe(true);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const qs: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : "?limit=2";
      const page = await api(t.apiKey).get<TaskList>(`/api/v1/tasks${qs}`);
      seen.push(...page.body.tasks.map((x) => x.task_id));
      cursor = page.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual([...ids].sort().reverse());
  });
});

describe("GET /api/v1/tasks/{id}/timeline", () => {
  it("pages by (occurred_at, id) with a keyset cursor", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const at = (s: number) => new Date(Date.UTC(2025, 5, 1, 8, 0, s)).toISOString();
    // sent out of order, with ties on occurred_at broken by id
    const events = [
      makeEvent(taskId, { id: "e-07", occurred_at: at(30) }),
      makeEvent(taskId, { id: "e-02", occurred_at: at(10) }),
      makeEvent(taskId, { id: "e-05", occurred_at: at(20) }),
      makeEvent(taskId, { id: "e-01", occurred_at: at(10) }),
      makeEvent(taskId, { id: "e-03", occurred_at: at(10) }),
      makeEvent(taskId, { id: "e-06", occurred_at: at(20) }),
      makeEvent(taskId, { id: "e-04", occurred_at: "2025-06-01T10:00:15+02:00" }), // 08:00:15Z
    ];
    const res = await postEvents(t.apiKey, events);
    expect(res.body.results.every((r) => r.status === "stored")).toBe(true);

    const ids: string[] = [];
    const times: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const qs: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : "?limit=2";
      const page = await api(t.apiKey).get<TimelinePage>(`/api/v1/tasks/${taskId}/timeline${qs}`);
      expect(page.status).toBe(200);
      expect(page.body.events.length).toBeLessThanOrEqual(2);
      ids.push(...page.body.events.map((e) => e.id));
      times.push(...page.body.events.map((e) => e.occurred_at));
      cursor = page.body.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(4);
    expect(ids).toEqual(["e-01", "e-02", "e-03", "e-04", "e-05", "e-06", "e-07"]);
    expect(times.map((s) => Date.parse(s))).toEqual([10, 10, 10, 15, 20, 20, 30].map((s) => Date.parse(at(s))));
  });
});
