/**
 * Custody maps and interruption exercises over the real HTTP API on PostgreSQL (docs/concepts.md#custody-maps): the
 * eight-row draft, refused custodians with their field paths, two owners editing one row (409 with both versions,
 * nothing overwritten), publish and versions, export → import round trip, exercises linked to a task with what the
 * product knows about it, completion setting the covered layers' verification, and every new route refusing the wrong
 * role (403) and the wrong tenant (404).
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type {
  CustodyMapJson,
  ExerciseJson,
  ExerciseView,
  LayerConflictDetails,
  LayerRow,
  MapListItem,
  MapView,
} from "@/lib/contract/maps";
import { LAYER_GUIDE, MAP_LAYERS } from "@/lib/domain/maps/layers";
import { checkpoint } from "./support/custody-calls";
import { addPerson, signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import { unknownEffect } from "./support/seeding";
import { auditRows } from "./support/stored-rows";
import { api, createTestTenant, newTaskId, signIn, testDbForFile, type FullTestTenant } from "./helpers";

const handle = testDbForFile();

type Auth = { cookie: string };
type Fields = Array<{ path: string; message: string }>;

async function newMap(owner: Auth, over: Partial<{ workflow: string; title: string }> = {}): Promise<MapView> {
  const res = await api(owner).post<MapView>("/api/v1/maps", {
    workflow: "document-processing",
    title: "Case files to reports",
    ...over,
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

function patchLayer(auth: Auth | string, mapId: string, layer: string, body: unknown) {
  return api(auth).request<{
    row: LayerRow;
    map: { version: number; status: string; new_draft: boolean };
    changed: boolean;
  }>("PATCH", `/api/v1/maps/${mapId}/layers/${layer}`, { json: body });
}

async function getMap(auth: Auth, mapId: string, version?: number): Promise<MapView> {
  const res = await api(auth).get<MapView>(`/api/v1/maps/${mapId}${version ? `?version=${version}` : ""}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const row = (m: CustodyMapJson, layer: string) => m.layers.find((l) => l.layer === layer)!;
const fieldsOf = (res: { body: unknown }) =>
  ((errorOf(res).details as { fields?: Fields } | undefined)?.fields ?? []) as Fields;

async function mapCount(tenantId: string): Promise<number> {
  const [r] = await queryRows<{ n: string }>(
    handle.db,
    sql`select count(*) as n from custody_maps where tenant_id = ${tenantId}`,
  );
  return Number(r!.n);
}

describe("custody maps", () => {
  let t: FullTestTenant;
  let owner: Auth;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
  });

  it("starts a draft with the eight layers in order and our worksheet text, and lists it with its progress", async () => {
    const map = await newMap(owner);
    expect(map).toMatchObject({
      workflow: "document-processing",
      title: "Case files to reports",
      version: 1,
      status: "draft",
      versions: [],
    });
    expect(map.layers.map((l) => l.layer)).toEqual([...MAP_LAYERS]);
    for (const l of map.layers) {
      expect(Object.keys(l).sort()).toEqual(
        [
          "acceptance_question",
          "custodians",
          "decision",
          "decision_note",
          "evidence",
          "handoff",
          "layer",
          "recovery_path",
          "revision",
          "verification",
          "verification_evidence",
        ].sort(),
      );
      expect(l).toMatchObject({
        custodians: [],
        verification: "unknown",
        verification_evidence: null,
        decision: null,
        revision: 1,
      });
      expect(l.acceptance_question).toBe(LAYER_GUIDE[l.layer].acceptanceQuestion);
    }
    expect(map.summary).toMatchObject({ undecided: 8, recommendation: "not_ready" });

    const ok = await patchLayer(owner, map.id, "tools", {
      custodians: [{ name: "Records API owners", organization: "Acme" }],
      decision: "accept",
      revision: 1,
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.row).toMatchObject({
      revision: 2,
      decision: "accept",
      custodians: [{ name: "Records API owners", organization: "Acme" }],
    });

    const list = await api(owner).get<{ maps: MapListItem[] }>("/api/v1/maps");
    const item = list.body.maps.find((m) => m.id === map.id)!;
    expect(item.progress).toEqual({ total: 8, custodians_named: 1, verified: 0, failed: 0, decided: 1 });
    expect(item.recommendation).toBe("not_ready");
    expect(
      (await api(owner).get<{ maps: MapListItem[] }>("/api/v1/maps?q=CASE%20FILES")).body.maps.map((m) => m.id),
    ).toContain(map.id);
    expect(
      (await api(owner).get<{ maps: MapListItem[] }>("/api/v1/maps?status=published")).body.maps.map((m) => m.id),
    ).not.toContain(map.id);
    expect(
      (await api(owner).get<{ maps: MapListItem[] }>("/api/v1/maps?attention=failed")).body.maps.map((m) => m.id),
    ).not.toContain(map.id);
    expectError(await api(owner).get("/api/v1/maps?status=frozen"), 400, "bad_request");
    expect((await auditRows(handle.db, t.tenantId, "map_layer.updated")).at(-1)).toMatchObject({
      target: `map:${map.id}/layer/tools`,
      details: { fields: ["custodians", "decision"] },
    });
  });

  it("refuses a custodian that only looks filled with a 422 naming the field, and writes nothing", async () => {
    const map = await newMap(owner);
    const audit = (await auditRows(handle.db, t.tenantId)).length;
    for (const name of ["shared", "  Everyone ", "TBD", "n/a", "   ", ""]) {
      const res = await patchLayer(owner, map.id, "compute", {
        custodians: [{ name, organization: "Acme" }],
        revision: 1,
      });
      expectError(res, 422, "validation_failed");
      expect(fieldsOf(res)[0]).toMatchObject({
        path: "custodians.0.name",
        message: expect.stringMatching(/name both sides .* handoff/),
      });
    }
    const two = await patchLayer(owner, map.id, "compute", {
      custodians: [
        { name: "Sandbox operations", organization: "VendorCo" },
        { name: "Platform", organization: "Acme" },
      ],
      revision: 1,
    });
    expect(fieldsOf(two).map((f) => f.path)).toEqual(["handoff"]);
    const verified = await patchLayer(owner, map.id, "compute", { verification: "verified", revision: 1 });
    expect(fieldsOf(verified).map((f) => f.path)).toEqual(["verification_evidence"]);
    const missingTask = await patchLayer(owner, map.id, "compute", {
      verification: "verified",
      verification_evidence: { kind: "task", ref: "no-such-task" },
      revision: 1,
    });
    expect(fieldsOf(missingTask)).toEqual([
      { path: "verification_evidence.ref", message: expect.stringMatching(/no task no-such-task/) },
    ]);
    const request = await patchLayer(owner, map.id, "compute", {
      decision: "request_evidence",
      decision_note: "Persistence boundaries",
      revision: 1,
    });
    expect(fieldsOf(request).map((f) => f.path)).toEqual(["decision_note"]);
    const constrain = await patchLayer(owner, map.id, "compute", { decision: "constrain", revision: 1 });
    expect(fieldsOf(constrain)[0]!.message).toMatch(/needs the constraint/);
    const secret = await patchLayer(owner, map.id, "compute", {
      evidence: "use Bearer abcdef0123456789abcdef",
      revision: 1,
    });
    expect(fieldsOf(secret)).toEqual([{ path: "evidence", message: expect.stringMatching(/credential/) }]);
    expectError(await patchLayer(owner, map.id, "compute", { revision: 1, owner: "me" }), 422, "validation_failed");
    expectError(await patchLayer(owner, map.id, "compute", { handoff: "x" }), 422, "validation_failed");
    expectError(await patchLayer(owner, map.id, "storage", { revision: 1 }), 404, "not_found");

    expect(row(await getMap(owner, map.id), "compute")).toMatchObject({
      revision: 1,
      custodians: [],
      verification: "unknown",
      decision: null,
    });
    expect((await auditRows(handle.db, t.tenantId)).length).toBe(audit);

    // Filled properly, the same row saves.
    const good = await patchLayer(owner, map.id, "compute", {
      custodians: [
        { name: "Sandbox operations", organization: "VendorCo" },
        { name: "Platform", organization: "Acme" },
      ],
      handoff: "VendorCo reports each replacement as a new attempt; Acme restores the snapshot and checks its digest.",
      decision: "request_evidence",
      decision_note: "Which paths survive a replacement — from Sandbox operations (VendorCo)",
      revision: 1,
    });
    expect(good.status, good.text).toBe(200);
    expect(good.body.row.revision).toBe(2);
  });

  it("two owners editing one row: the second gets 409 with both versions, and nothing is overwritten", async () => {
    const map = await newMap(owner);
    const secondOwner = { cookie: await signIn(await addPerson(handle.db, t, "owner"), t.password) };
    const base = row(await getMap(owner, map.id), "credentials").revision;

    const first = await patchLayer(owner, map.id, "credentials", {
      custodians: [{ name: "Identity team", organization: "Acme" }],
      revision: base,
    });
    expect(first.status, first.text).toBe(200);
    const second = await patchLayer(secondOwner, map.id, "credentials", {
      custodians: [{ name: "Vault operators", organization: "Acme" }],
      evidence: "Revocation log",
      revision: base,
    });
    expectError(second, 409, "conflict");
    const details = errorOf(second).details as LayerConflictDetails;
    expect(details.current).toMatchObject({
      revision: base + 1,
      custodians: [{ name: "Identity team", organization: "Acme" }],
    });
    expect(details.yours).toMatchObject({
      revision: base,
      custodians: [{ name: "Vault operators", organization: "Acme" }],
      evidence: "Revocation log",
    });
    expect(details.current_updated_by).toBe(t.users.owner.email);
    expect(errorOf(second).message).toMatch(new RegExp(`${t.users.owner.email.replace(/[.]/g, "\\.")} saved this row`));
    expect(row(await getMap(owner, map.id), "credentials")).toMatchObject({
      revision: base + 1,
      custodians: [{ name: "Identity team", organization: "Acme" }],
    });

    // At the same moment: exactly one wins.
    const [a, b] = await Promise.all([
      patchLayer(owner, map.id, "artifacts", { evidence: "Manifest A", revision: 1 }),
      patchLayer(secondOwner, map.id, "artifacts", { evidence: "Manifest B", revision: 1 }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const winner = a.status === 200 ? "Manifest A" : "Manifest B";
    expect(row(await getMap(owner, map.id), "artifacts")).toMatchObject({ evidence: winner, revision: 2 });
  });

  it("publishing freezes a version; later edits start a new draft and versions can be compared", async () => {
    const map = await newMap(owner);
    await patchLayer(owner, map.id, "recovery", { decision: "accept", revision: 1 });
    const pub = await api(owner).post<MapView>(`/api/v1/maps/${map.id}/publish`, {});
    expect(pub.status, pub.text).toBe(200);
    expect(pub.body).toMatchObject({
      version: 1,
      status: "published",
      versions: [{ version: 1, published_by: t.users.owner.email }],
    });
    expectError(await api(owner).post(`/api/v1/maps/${map.id}/publish`, {}), 409, "conflict");
    expectError(await api(owner).post(`/api/v1/maps/${map.id}/publish`, { force: true }), 422, "validation_failed");

    const edit = await patchLayer(owner, map.id, "recovery", {
      decision: "constrain",
      decision_note: "Shorter runs",
      revision: 2,
    });
    expect(edit.body.map).toMatchObject({ version: 2, status: "draft", new_draft: true });
    const again = await patchLayer(owner, map.id, "export", { evidence: "Bundle inventory", revision: 1 });
    expect(again.body.map).toMatchObject({ version: 2, status: "draft", new_draft: false });

    const v1 = await getMap(owner, map.id, 1);
    expect(v1).toMatchObject({ version: 1, status: "published" });
    expect(row(v1, "recovery")).toMatchObject({ decision: "accept", decision_note: "" });
    expect(row(v1, "export").evidence).toBe(LAYER_GUIDE.export.evidence);
    const current = await getMap(owner, map.id);
    expect(current).toMatchObject({ version: 2, status: "draft" });
    expect(row(current, "recovery")).toMatchObject({ decision: "constrain", decision_note: "Shorter runs" });
    expectError(await api(owner).get(`/api/v1/maps/${map.id}?version=2`), 404, "not_found");
    expectError(await api(owner).get(`/api/v1/maps/${map.id}?version=zero`), 400, "bad_request");

    // An unchanged save writes nothing and keeps a published map published.
    const v2 = await api(owner).post<MapView>(`/api/v1/maps/${map.id}/publish`, {});
    expect(v2.body).toMatchObject({ version: 2, status: "published" });
    const same = await patchLayer(owner, map.id, "export", { evidence: "Bundle inventory", revision: 2 });
    expect(same.body).toMatchObject({ changed: false, map: { version: 2, status: "published" } });
    expect(row(await getMap(owner, map.id, 1), "recovery").decision).toBe("accept");
    expect(
      (await auditRows(handle.db, t.tenantId, "map.published"))
        .filter((a) => a.target === `map:${map.id}`)
        .map((a) => a.details.version),
    ).toEqual([1, 2]);
  });

  it("exports Markdown and JSON; importing the JSON gives back the same map", async () => {
    const map = await newMap(owner, { workflow: "invoice-intake", title: "Invoices | round trip" });
    await patchLayer(owner, map.id, "session_state", {
      custodians: [
        { name: "Harness operator", organization: "VendorCo" },
        { name: "Agent platform", organization: "Acme" },
      ],
      handoff: "VendorCo exports the checkpoint reference nightly; Acme checks it against the run's task record.",
      evidence: "Checkpoint id\nand version",
      verification: "verified",
      verification_evidence: { kind: "artifact", ref: `sha256:${"AB".repeat(32)}`, note: "Snapshot digest" },
      decision: "request_evidence",
      decision_note: "Retention period of sessions — from Harness support (VendorCo)",
      revision: 1,
    });
    await patchLayer(owner, map.id, "tools", {
      decision: "constrain",
      decision_note: "Reversible effects only",
      revision: 1,
    });

    const json = await api(owner).get<CustodyMapJson>(`/api/v1/maps/${map.id}/export?format=json`);
    expect(json.status, json.text).toBe(200);
    expect(json.headers.get("content-disposition")).toMatch(
      /attachment; filename="custody-map-invoice-intake-v1\.json"/,
    );
    expect(Object.keys(json.body).sort()).toEqual(["id", "layers", "status", "title", "version", "workflow"]);
    expect(row(json.body, "session_state").verification_evidence).toEqual({
      kind: "artifact",
      ref: "ab".repeat(32),
      note: "Snapshot digest",
    });

    const md = await api(owner).get<string>(`/api/v1/maps/${map.id}/export?format=md`);
    expect(md.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect(md.text).toMatch(/^# Invoices \| round trip\n/);
    expect(md.text).toContain(
      "| Session state | Harness operator (VendorCo); Agent platform (Acme) | Checkpoint id<br>and version |",
    );
    expect(md.text).toContain("Retention period of sessions, from Harness support (VendorCo)");
    expectError(await api(owner).get(`/api/v1/maps/${map.id}/export?format=xml`), 400, "bad_request");

    const before = await mapCount(t.tenantId);
    const imported = await api(owner).post<MapView>("/api/v1/maps/import", json.body);
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.id).not.toBe(map.id);
    expect(imported.body).toMatchObject({ version: 1, status: "draft" });
    expect(await mapCount(t.tenantId)).toBe(before + 1);
    const again = await api(owner).get<CustodyMapJson>(`/api/v1/maps/${imported.body.id}/export?format=json`);
    const { id: _a, ...original } = json.body;
    const { id: _b, ...roundTrip } = again.body;
    expect(roundTrip).toEqual(original);
    expect((await auditRows(handle.db, t.tenantId, "map.imported")).at(-1)).toMatchObject({
      details: { source_id: map.id, source_version: 1 },
    });
  });

  it("refuses a bad import with 422 naming each field path, and writes nothing", async () => {
    const map = await newMap(owner);
    const doc = (await api(owner).get<CustodyMapJson>(`/api/v1/maps/${map.id}/export?format=json`)).body;
    const before = await mapCount(t.tenantId);
    const cases: Array<[unknown, string[]]> = [
      [
        {
          ...doc,
          layers: doc.layers.map((l, i) =>
            i === 2 ? { ...l, custodians: [{ name: "SHARED", organization: "Acme" }] } : l,
          ),
        },
        ["layers.2.custodians.0.name"],
      ],
      [
        { ...doc, layers: doc.layers.map((l, i) => (i === 5 ? { ...l, verification: "failed" } : l)) },
        ["layers.5.verification_evidence"],
      ],
      [
        { ...doc, layers: [doc.layers[1], doc.layers[0], ...doc.layers.slice(2)] },
        ["layers.0.layer", "layers.1.layer"],
      ],
      [{ ...doc, layers: doc.layers.slice(1) }, ["layers"]],
      [
        { ...doc, layers: doc.layers.map((l, i) => (i === 0 ? { ...l, decision: "adopt" } : l)) },
        ["layers.0.decision"],
      ],
      [{ ...doc, workflow: "" }, ["workflow"]],
      [{ ...doc, owner: "me" }, [""]],
      [
        {
          ...doc,
          layers: doc.layers.map((l, i) =>
            i === 3 ? { ...l, decision_note: "key sk-abcdefghijklmnopqrstuvwxyz012345" } : l,
          ),
        },
        ["layers.3.decision_note"],
      ],
    ];
    for (const [body, paths] of cases) {
      const res = await api(owner).post("/api/v1/maps/import", body);
      expectError(res, 422, "validation_failed");
      expect(
        fieldsOf(res).map((f) => f.path),
        JSON.stringify(fieldsOf(res)),
      ).toEqual(paths);
    }
    expectError(await api(owner).request("POST", "/api/v1/maps/import", { raw: "{not json" }), 400, "invalid_json");
    expect(await mapCount(t.tenantId)).toBe(before);
  });
});

describe("interruption exercises", () => {
  let t: FullTestTenant;
  let owner: Auth;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
  });

  it("links a task and shows what the product knows; completing verifies the covered layers with a link back", async () => {
    const map = await newMap(owner);
    const { taskId } = await unknownEffect(handle.db, t);
    const created = await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.id}/exercises`, {
      interruption_point: "after_external_write",
      layers: ["recovery", "tools"],
    });
    expect(created.status, created.text).toBe(200);
    const ex = created.body;
    expect(ex).toMatchObject({ status: "in_progress", outcome: null, revision: 1, layers: ["tools", "recovery"] });
    expect(ex.steps.map((s) => s.step)).toEqual([
      "define_expected_result",
      "establish_checkpoint",
      "interrupt",
      "resume_and_reconcile",
      "retrieve_and_export",
      "test_revocation",
    ]);
    expect((await api(owner).post(`/api/v1/maps/${map.id}/exercises`, {})).status).toBe(422);

    // A task of another tenant is not found by this one.
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const foreign = newTaskId();
    await checkpoint(other, foreign);
    const steps = ex.steps.map((s) => ({ ...s, status: "passed", note: `${s.step} done` }));
    steps[2] = { ...steps[2]!, task_id: foreign };
    const refused = await api(owner).request("PATCH", `/api/v1/maps/${map.id}/exercises/${ex.id}`, {
      json: { steps, revision: 1 },
    });
    expect(fieldsOf(refused)).toEqual([{ path: "steps.2.task_id", message: expect.stringMatching(/no task/) }]);

    steps[2] = { ...steps[2]!, task_id: taskId };
    // "Resume and reconcile" tests Tools and Recovery: it verifies them only with evidence of its own (the task).
    steps[3] = { ...steps[3]!, task_id: taskId };
    steps[4] = { ...steps[4]!, artifact_digest: `SHA256:${"B".repeat(64)}` };
    const saved = await api(owner).request<ExerciseJson>("PATCH", `/api/v1/maps/${map.id}/exercises/${ex.id}`, {
      json: { steps, revision: 1 },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.revision).toBe(2);
    expect(saved.body.steps[4]!.artifact_digest).toBe("b".repeat(64));
    const stale = await api(owner).request("PATCH", `/api/v1/maps/${map.id}/exercises/${ex.id}`, {
      json: { finding: "x", revision: 1 },
    });
    expectError(stale, 409, "conflict");
    expect((errorOf(stale).details as { current: ExerciseJson }).current.revision).toBe(2);

    const view = await api(owner).get<ExerciseView>(`/api/v1/maps/${map.id}/exercises/${ex.id}`);
    expect(view.status, view.text).toBe(200);
    expect(view.body.linked_tasks).toHaveLength(1);
    const facts = view.body.linked_tasks[0]!;
    expect(facts.task_id).toBe(taskId);
    expect(facts.checkpoints[0]).toMatchObject({ version: 1, signature_valid: true });
    expect(facts.unknown_side_effects.map((e) => e.name)).toEqual(["update_record"]);
    expect(facts.gate.verdict).toBe("stop");
    expect(facts.gate.reasons.map((r) => r.code)).toContain("side_effect_unknown");
    expect(facts.artifacts.length).toBeGreaterThan(0);

    // Someone edits a covered row meanwhile: the exercise's result gives it a new revision, so their stale save is a 409.
    const toolsBefore = row(await getMap(owner, map.id), "tools").revision;
    const incomplete = await api(owner).post(`/api/v1/maps/${map.id}/exercises/${ex.id}/complete`, {
      outcome: "visible_stop",
      finding: "short",
      revision: 2,
    });
    expect(fieldsOf(incomplete).map((f) => f.path)).toEqual(["finding"]);
    const done = await api(owner).post<{ exercise: ExerciseJson; layers: LayerRow[]; map: { version: number } }>(
      `/api/v1/maps/${map.id}/exercises/${ex.id}/complete`,
      {
        outcome: "visible_stop",
        finding: "The gate stopped until the unknown write was reconciled; nothing was written twice.",
        revision: 2,
      },
    );
    expect(done.status, done.text).toBe(200);
    expect(done.body.exercise).toMatchObject({
      status: "completed",
      outcome: "visible_stop",
      completed_map_version: 1,
    });
    const after = await getMap(owner, map.id);
    for (const layer of ["tools", "recovery"]) {
      expect(row(after, layer)).toMatchObject({
        verification: "verified",
        verification_evidence: {
          kind: "exercise",
          ref: ex.id,
          note: expect.stringMatching(/^Visible stop: The gate stopped/),
        },
      });
    }
    expect(row(after, "tools").revision).toBe(toolsBefore + 1);
    expect(row(after, "compute").verification).toBe("unknown");
    expectError(
      await patchLayer(owner, map.id, "tools", { decision: "accept", revision: toolsBefore }),
      409,
      "conflict",
    );
    // The link back is valid evidence for a row too.
    expect(
      (
        await patchLayer(owner, map.id, "compute", {
          verification: "verified",
          verification_evidence: { kind: "exercise", ref: ex.id },
          revision: 1,
        })
      ).status,
    ).toBe(200);

    expectError(
      await api(owner).post(`/api/v1/maps/${map.id}/exercises/${ex.id}/complete`, {
        outcome: "unsafe",
        finding: "Again, differently.",
        revision: 3,
      }),
      409,
      "conflict",
    );
    expectError(
      await api(owner).request("PATCH", `/api/v1/maps/${map.id}/exercises/${ex.id}`, {
        json: { finding: "changed later", revision: 3 },
      }),
      409,
      "conflict",
    );
    const list = await api(owner).get<{ exercises: Array<{ id: string; outcome: string }> }>(
      `/api/v1/maps/${map.id}/exercises`,
    );
    expect(list.body.exercises).toEqual([expect.objectContaining({ id: ex.id, outcome: "visible_stop" })]);
    expect((await auditRows(handle.db, t.tenantId, "exercise.completed")).at(-1)).toMatchObject({
      target: `exercise:${ex.id}`,
      details: {
        outcome: "visible_stop",
        results: [
          { layer: "tools", verification: "verified", why: expect.stringContaining("passed with evidence") },
          { layer: "recovery", verification: "verified", why: expect.stringContaining("passed with evidence") },
        ],
      },
    });
  });

  it("an unsafe outcome fails the covered layers, starts a new draft of a published map, and holds adoption", async () => {
    const map = await newMap(owner);
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    await patchLayer(owner, map.id, "tools", { decision: "accept", revision: 1 });
    await api(owner).post(`/api/v1/maps/${map.id}/publish`, {});
    const ex = (
      await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.id}/exercises`, {
        interruption_point: "after_intent",
        layers: ["tools"],
      })
    ).body;
    const pending = await api(owner).post(`/api/v1/maps/${map.id}/exercises/${ex.id}/complete`, {
      outcome: "unsafe",
      finding: "The record was updated twice after resuming.",
      revision: 1,
    });
    expect(fieldsOf(pending).map((f) => f.path)).toEqual([
      "steps.0.status",
      "steps.1.status",
      "steps.2.status",
      "steps.3.status",
      "steps.4.status",
      "steps.5.status",
      "steps",
    ]);
    const steps = ex.steps.map((s) => ({
      ...s,
      status: s.step === "test_revocation" ? "blocked" : "failed",
      task_id: taskId,
    }));
    const saved = (
      await api(owner).request<ExerciseJson>("PATCH", `/api/v1/maps/${map.id}/exercises/${ex.id}`, {
        json: { steps, revision: 1 },
      })
    ).body;
    const done = await api(owner).post<{ map: { version: number; status: string; new_draft: boolean } }>(
      `/api/v1/maps/${map.id}/exercises/${ex.id}/complete`,
      {
        outcome: "unsafe",
        finding: "The record was updated twice after resuming.",
        revision: saved.revision,
      },
    );
    expect(done.status, done.text).toBe(200);
    expect(done.body.map).toEqual({ id: map.id, version: 2, status: "draft", new_draft: true });
    const after = await getMap(owner, map.id);
    expect(row(after, "tools")).toMatchObject({
      verification: "failed",
      decision: "accept",
      verification_evidence: { kind: "exercise", ref: ex.id },
    });
    expect(after.summary.reasons.join(" ")).toMatch(
      /Tools is accepted, but its verification failed: reconsider it \(constrain is suggested\)/,
    );
    expect(row(await getMap(owner, map.id, 1), "tools").verification).toBe("unknown");
    expect(
      (await api(owner).get<{ maps: MapListItem[] }>("/api/v1/maps?attention=failed")).body.maps.map((m) => m.id),
    ).toContain(map.id);
  });
});

describe("who may use the map routes", () => {
  let t: FullTestTenant;
  let owner: Auth;
  let map: MapView;
  let ex: ExerciseJson;
  let doc: CustodyMapJson;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
    map = await newMap(owner);
    ex = (
      await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.id}/exercises`, { interruption_point: "after_intent" })
    ).body;
    doc = (await api(owner).get<CustodyMapJson>(`/api/v1/maps/${map.id}/export?format=json`)).body;
  });

  const reads = (): Array<[string, string]> => [
    ["GET", "/api/v1/maps"],
    ["GET", `/api/v1/maps/${map.id}`],
    ["GET", `/api/v1/maps/${map.id}/export?format=json`],
    ["GET", `/api/v1/maps/${map.id}/export?format=md`],
    ["GET", `/api/v1/maps/${map.id}/exercises`],
    ["GET", `/api/v1/maps/${map.id}/exercises/${ex.id}`],
  ];
  const writes = (): Array<[string, string, unknown]> => [
    ["POST", "/api/v1/maps", { workflow: "w", title: "t" }],
    ["POST", "/api/v1/maps/import", doc],
    ["PATCH", `/api/v1/maps/${map.id}/layers/tools`, { evidence: "changed", revision: 1 }],
    ["POST", `/api/v1/maps/${map.id}/publish`, {}],
    ["POST", `/api/v1/maps/${map.id}/exercises`, { interruption_point: "after_receipt" }],
    ["PATCH", `/api/v1/maps/${map.id}/exercises/${ex.id}`, { finding: "changed", revision: 1 }],
    [
      "POST",
      `/api/v1/maps/${map.id}/exercises/${ex.id}/complete`,
      { outcome: "safe_resume", finding: "A finding long enough.", revision: 1 },
    ],
  ];

  it("approvers, responders and viewers read but cannot write (403), and nothing changes", async () => {
    const audit = (await auditRows(handle.db, t.tenantId)).length;
    for (const role of ["viewer", "approver", "responder"] as const) {
      const auth = await signInAs(t, role);
      for (const [method, path] of reads())
        expect((await api(auth).request(method, path)).status, `${role} ${method} ${path}`).toBe(200);
      for (const [method, path, body] of writes()) {
        const res = await api(auth).request(method, path, { json: body });
        expectError(res, 403, "forbidden");
        expect(errorOf(res).message, `${role} ${method} ${path}`).toMatch(/only roles owner, admin can/);
      }
    }
    expect((await auditRows(handle.db, t.tenantId)).length).toBe(audit);
    expect(row(await getMap(owner, map.id), "tools").revision).toBe(1);
    // An admin may, like an owner.
    expect(
      (await patchLayer(await signInAs(t, "admin"), map.id, "tools", { evidence: "changed by the admin", revision: 1 }))
        .status,
    ).toBe(200);
  });

  it("runtime keys get 403 on every map route, and no credentials get 401", async () => {
    for (const [method, path] of reads()) expectError(await api(t.apiKey).request(method, path), 403, "forbidden");
    for (const [method, path, body] of writes())
      expectError(await api(t.apiKey).request(method, path, { json: body }), 403, "forbidden");
    for (const [method, path] of reads()) expectError(await api().request(method, path), 401, "unauthorized");
  });

  it("another tenant's owner gets 404 for this tenant's map and exercise, on every route", async () => {
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const stranger = await signInAs(other, "owner");
    for (const [method, path] of reads().slice(1))
      expectError(await api(stranger).request(method, path), 404, "not_found");
    for (const [method, path, body] of writes().slice(2))
      expectError(await api(stranger).request(method, path, { json: body }), 404, "not_found");
    const list = await api(stranger).get<{ maps: MapListItem[] }>("/api/v1/maps");
    expect(list.body.maps.map((m) => m.id)).not.toContain(map.id);
    expectError(await api(stranger).get("/api/v1/maps/not-a-uuid"), 404, "not_found");
    // An exercise of one map is not found under another map.
    const mine = await newMap(stranger);
    expectError(await api(stranger).get(`/api/v1/maps/${mine.id}/exercises/${ex.id}`), 404, "not_found");
    expect((await auditRows(handle.db, other.tenantId)).filter((a) => a.target.includes(map.id))).toEqual([]);
  });
});
