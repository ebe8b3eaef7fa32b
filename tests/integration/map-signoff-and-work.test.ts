/**
 * The worksheet a team brings to an adoption decision (issue 24, decision 0046), over the real HTTP API on
 * PostgreSQL: a published version is signed off by a named reviewer who is not its last editor (the last editor is
 * refused 403 `signoff_by_last_editor`, nothing written; the sign-off is audited and shown in both exports); per layer
 * several evidence items (ids checked in this workspace, links only http(s)), an assignee who is a member, and
 * bounded comments; renaming and archiving (hidden from the list unless asked for); importing a map's JSON as the
 * next version of the map of that workflow. Every new action refuses viewers (403) and another tenant (404).
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { CustodyMapJson, EvidenceItem, LayerComment, MapListItem, MapView } from "@/lib/contract/maps";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import { auditRows } from "./support/stored-rows";
import { api, createTestTenant, newTaskId, rid, testDbForFile, type FullTestTenant } from "./helpers";

const handle = testDbForFile();

type Auth = { cookie: string };
type Fields = Array<{ path: string; message: string }>;
const fieldsOf = (res: { body: unknown }) =>
  ((errorOf(res).details as { fields?: Fields } | undefined)?.fields ?? []) as Fields;

async function newMap(auth: Auth, workflow = `wf-${rid()}`, title = "Case files to reports"): Promise<MapView> {
  const res = await api(auth).post<MapView>("/api/v1/maps", { workflow, title });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function getMap(auth: Auth, mapId: string): Promise<MapView> {
  const res = await api(auth).get<MapView>(`/api/v1/maps/${mapId}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function editAndPublish(auth: Auth, map: MapView, decision = "request_evidence"): Promise<MapView> {
  const current = await getMap(auth, map.id);
  const tools = current.layers.find((l) => l.layer === "tools")!;
  const patch = await api(auth).request("PATCH", `/api/v1/maps/${map.id}/layers/tools`, {
    json: {
      decision,
      decision_note: decision === "request_evidence" ? "Retention period — from the vendor" : "",
      revision: tools.revision,
    },
  });
  expect(patch.status, patch.text).toBe(200);
  const pub = await api(auth).post<MapView>(`/api/v1/maps/${map.id}/publish`, {});
  expect(pub.status, pub.text).toBe(200);
  return pub.body;
}

describe("signing off an adoption decision", () => {
  let t: FullTestTenant;
  let owner: Auth;
  let admin: Auth;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
    admin = await signInAs(t, "admin");
  });

  it("refuses the version's last editor with 403 signoff_by_last_editor and writes nothing", async () => {
    const map = await newMap(owner);
    const published = await editAndPublish(owner, map);
    expect(published.versions[0]).toMatchObject({
      version: 1,
      last_edited_by: t.users.owner.email,
      signed_off_by: null,
    });
    const before = (await auditRows(handle.db, t.tenantId)).length;
    const res = await api(owner).post(`/api/v1/maps/${map.id}/signoff`, { version: 1 });
    expectError(res, 403, "signoff_by_last_editor");
    expect(errorOf(res).message).toMatch(/you made the last change to version 1/i);
    expect((await auditRows(handle.db, t.tenantId)).length).toBe(before);
    expect((await getMap(owner, map.id)).versions[0]!.signed_off_by).toBeNull();
  });

  it("records another reviewer's sign-off with who and when, audits it, and shows it in both exports", async () => {
    const map = await newMap(owner, `wf-${rid()}`, "Invoices | sign-off");
    await editAndPublish(owner, map);
    const res = await api(admin).post<MapView>(`/api/v1/maps/${map.id}/signoff`, {
      version: 1,
      note: "Read with the vendor's retention answer pending.",
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.signoff).toMatchObject({ version: 1, signed_off_by: t.users.admin.email });
    expect(res.body.versions[0]).toMatchObject({
      signed_off_by: t.users.admin.email,
      signed_off_at: expect.any(String),
    });
    const [audit] = (await auditRows(handle.db, t.tenantId, "map.signoff_recorded")).filter(
      (a) => a.target === `map:${map.id}`,
    );
    expect(audit).toMatchObject({
      actor_label: t.users.admin.email,
      details: { version: 1, last_edited_by: t.users.owner.email },
    });

    const json = await api(owner).get<CustodyMapJson>(`/api/v1/maps/${map.id}/export?format=json`);
    expect(json.body.signoff).toMatchObject({ version: 1, signed_off_by: t.users.admin.email });
    const md = await api(owner).get<string>(`/api/v1/maps/${map.id}/export?format=md`);
    expect(md.text).toContain(`- Signed off: by ${t.users.admin.email} at `);
    expect(md.text).toContain("Read with the vendor's retention answer pending.");
    // The exported document still imports (the sign-off is read, never imported).
    const again = await api(owner).post<MapView>("/api/v1/maps/import", json.body);
    expect(again.status, again.text).toBe(200);
    expect(again.body.signoff).toBeUndefined();

    expectError(
      await api(await signInAs(t, "approver")).post(`/api/v1/maps/${map.id}/signoff`, { version: 1 }),
      409,
      "already_signed_off",
    );
  });

  it("an approver may sign off; a new published version needs its own sign-off; drafts cannot be signed off", async () => {
    const map = await newMap(owner);
    expectError(await api(admin).post(`/api/v1/maps/${map.id}/signoff`, { version: 1 }), 404, "not_found");
    await editAndPublish(owner, map);
    const approver = await signInAs(t, "approver");
    expect((await api(approver).post(`/api/v1/maps/${map.id}/signoff`, { version: 1 })).status).toBe(200);
    await editAndPublish(admin, map, "accept");
    expectError(await api(approver).post(`/api/v1/maps/${map.id}/signoff`, { version: 1 }), 409, "conflict");
    expectError(await api(admin).post(`/api/v1/maps/${map.id}/signoff`, { version: 2 }), 403, "signoff_by_last_editor");
    const v2 = await api(owner).post<MapView>(`/api/v1/maps/${map.id}/signoff`, { version: 2 });
    expect(v2.status, v2.text).toBe(200);
    expect(v2.body.versions.map((v) => v.signed_off_by)).toEqual([t.users.owner.email, t.users.approver.email]);
    expectError(await api(owner).post(`/api/v1/maps/${map.id}/signoff`, {}), 422, "validation_failed");
  });
});

describe("per layer: evidence items, assignee, comments", () => {
  let t: FullTestTenant;
  let owner: Auth;
  let map: MapView;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
    map = await newMap(owner);
  });
  const add = (auth: Auth, layer: string, body: unknown) =>
    api(auth).post<EvidenceItem>(`/api/v1/maps/${map.id}/layers/${layer}/evidence`, body);

  it("keeps several evidence items per layer, each checked to exist in this workspace", async () => {
    const taskId = newTaskId("map-evidence");
    await checkpoint(t, taskId);
    const ex = await api(owner).post<{ id: string }>(`/api/v1/maps/${map.id}/exercises`, {
      interruption_point: "after_intent",
    });
    const items = [
      { kind: "exercise", ref: ex.body.id },
      { kind: "task", ref: taskId, note: "The demo run" },
      { kind: "document", ref: "https://wiki.example.com/runbooks/tools" },
    ];
    for (const body of items) {
      const res = await add(owner, "tools", body);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ ...body, layer: "tools", added_by: t.users.owner.email });
    }
    const refused: Array<[unknown, RegExp]> = [
      [{ kind: "exercise", ref: "00000000-0000-4000-8000-000000000000" }, /no exercise/],
      [{ kind: "exercise", ref: "not-an-id" }, /no exercise/],
      [{ kind: "task", ref: "no-such-task" }, /no task no-such-task/],
      [{ kind: "bundle", ref: "ab".repeat(32) }, /no bundle abababababab… was exported/],
      [{ kind: "bundle", ref: "xyz" }, /sha256/],
      [{ kind: "document", ref: "javascript:alert(1)" }, /http or https, not javascript/],
      [{ kind: "document", ref: "ftp://files.example.com/x" }, /http or https, not ftp/],
      [{ kind: "document", ref: "wiki page" }, /full http\(s\) address/],
    ];
    for (const [body, message] of refused) {
      const res = await add(owner, "tools", body);
      expectError(res, 422, "validation_failed");
      expect(fieldsOf(res)[0], JSON.stringify(body)).toMatchObject({
        path: "ref",
        message: expect.stringMatching(message),
      });
    }
    expectError(await add(owner, "tools", { kind: "link", ref: "https://x.example" }), 422, "validation_failed");
    const view = await getMap(owner, map.id);
    expect(view.work.tools.evidence_items.map((i) => i.kind)).toEqual(["exercise", "task", "document"]);
    expect(view.work.compute.evidence_items).toEqual([]);
    // The row itself did not change, and no new draft or revision came of it.
    expect(view.layers.find((l) => l.layer === "tools")!.revision).toBe(1);

    const removed = await api(owner).request(
      "DELETE",
      `/api/v1/maps/${map.id}/layers/tools/evidence/${view.work.tools.evidence_items[1]!.id}`,
    );
    expect(removed.status, removed.text).toBe(200);
    expect((await getMap(owner, map.id)).work.tools.evidence_items.map((i) => i.kind)).toEqual([
      "exercise",
      "document",
    ]);
    const actions = (await auditRows(handle.db, t.tenantId)).map((a) => a.action);
    expect(actions.filter((a) => a === "map_evidence.added")).toHaveLength(3);
    expect(actions).toContain("map_evidence.removed");
  });

  it("assigns a layer to a member of the workspace, never to someone outside it", async () => {
    const res = await api(owner).request<{ assignee: string }>(
      "PUT",
      `/api/v1/maps/${map.id}/layers/compute/assignee`,
      {
        json: { assignee: t.users.responder.email.toUpperCase() },
      },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.assignee).toBe(t.users.responder.email);
    expect((await getMap(owner, map.id)).work.compute.assignee).toBe(t.users.responder.email);
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const outsider = await api(owner).request("PUT", `/api/v1/maps/${map.id}/layers/compute/assignee`, {
      json: { assignee: other.users.owner!.email },
    });
    expectError(outsider, 422, "validation_failed");
    expect(fieldsOf(outsider)[0]).toMatchObject({
      path: "assignee",
      message: expect.stringMatching(/not a member of this workspace/),
    });
    expect((await getMap(owner, map.id)).work.compute.assignee).toBe(t.users.responder.email);
    const cleared = await api(owner).request("PUT", `/api/v1/maps/${map.id}/layers/compute/assignee`, {
      json: { assignee: null },
    });
    expect(cleared.status, cleared.text).toBe(200);
    expect((await getMap(owner, map.id)).work.compute.assignee).toBeNull();
    const audit = (await auditRows(handle.db, t.tenantId, "map_layer.assigned")).map((a) => a.details);
    expect(audit).toEqual([
      expect.objectContaining({ layer: "compute", from: null, to: t.users.responder.email }),
      expect.objectContaining({ layer: "compute", from: t.users.responder.email, to: null }),
    ]);
  });

  it("keeps comments with their author and time, bounded in length", async () => {
    const responder = await signInAs(t, "responder");
    const res = await api(responder).post<LayerComment>(`/api/v1/maps/${map.id}/layers/credentials/comments`, {
      text: "  The vault lane's check covers this.\nSecond line.  ",
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      layer: "credentials",
      author: t.users.responder.email,
      body: "The vault lane's check covers this.\nSecond line.",
      created_at: expect.stringMatching(/Z$/),
    });
    expectError(
      await api(responder).post(`/api/v1/maps/${map.id}/layers/credentials/comments`, { text: "   " }),
      422,
      "validation_failed",
    );
    const long = await api(responder).post(`/api/v1/maps/${map.id}/layers/credentials/comments`, {
      text: "x".repeat(2001),
    });
    expectError(long, 422, "validation_failed");
    expect(fieldsOf(long)[0]?.path).toBe("text");
    expect((await getMap(owner, map.id)).work.credentials.comments).toHaveLength(1);
  });
});

describe("renaming, archiving and importing as a new version", () => {
  let t: FullTestTenant;
  let owner: Auth;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
  });
  const list = async (query = "") =>
    (await api(owner).get<{ maps: MapListItem[] }>(`/api/v1/maps${query}`)).body.maps.map((m) => m.id);

  it("renames and archives a map: archived maps are hidden unless asked for; both audited", async () => {
    const map = await newMap(owner);
    const renamed = await api(owner).request<MapView>("PATCH", `/api/v1/maps/${map.id}`, {
      json: { title: "Claims, renamed" },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.title).toBe("Claims, renamed");
    expectError(
      await api(owner).request("PATCH", `/api/v1/maps/${map.id}`, { json: { title: "  " } }),
      422,
      "validation_failed",
    );
    expectError(await api(owner).request("PATCH", `/api/v1/maps/${map.id}`, { json: {} }), 422, "validation_failed");

    expect(await list()).toContain(map.id);
    const archived = await api(owner).request<MapView>("PATCH", `/api/v1/maps/${map.id}`, { json: { archived: true } });
    expect(archived.status, archived.text).toBe(200);
    expect(archived.body).toMatchObject({ archived_by: t.users.owner.email, archived_at: expect.any(String) });
    expect(await list()).not.toContain(map.id);
    expect(await list("?archived=include")).toContain(map.id);
    expect(await list("?archived=only")).toEqual([map.id]);
    expectError(await api(owner).get("/api/v1/maps?archived=maybe"), 400, "bad_request");
    expectError(
      await api(owner).request("PATCH", `/api/v1/maps/${map.id}`, { json: { archived: true } }),
      409,
      "conflict",
    );
    // Still opens by its address.
    expect((await getMap(owner, map.id)).title).toBe("Claims, renamed");
    const back = await api(owner).request("PATCH", `/api/v1/maps/${map.id}`, { json: { archived: false } });
    expect(back.status, back.text).toBe(200);
    expect(await list()).toContain(map.id);
    const actions = (await auditRows(handle.db, t.tenantId))
      .filter((a) => a.target === `map:${map.id}`)
      .map((a) => a.action);
    expect(actions).toEqual(["map.created", "map.renamed", "map.archived", "map.unarchived"]);
  });

  it("imports a map's JSON as the next version of the map of its workflow; the published version stays frozen", async () => {
    const workflow = `claims-${rid()}`;
    const map = await newMap(owner, workflow);
    await editAndPublish(owner, map);
    const doc = (await api(owner).get<CustodyMapJson>(`/api/v1/maps/${map.id}/export?format=json`)).body;
    expect(await list(`?workflow=${workflow}`)).toEqual([map.id]);
    expect(await list(`?workflow=${workflow.slice(0, -1)}`)).toEqual([]);
    doc.layers[2]!.decision = "accept";
    doc.layers[2]!.decision_note = "";
    const res = await api(owner).post<MapView>(`/api/v1/maps/${map.id}/import`, doc);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: map.id, version: 2, status: "draft" });
    expect(res.body.layers[2]).toMatchObject({ decision: "accept", revision: 3 });
    const v1 = await api(owner).get<MapView>(`/api/v1/maps/${map.id}?version=1`);
    expect(v1.body.layers[2]!.decision).toBe("request_evidence");
    expect(await list(`?workflow=${workflow}`)).toEqual([map.id]);
    expect((await auditRows(handle.db, t.tenantId, "map.version_imported")).at(-1)).toMatchObject({
      target: `map:${map.id}`,
      details: { version: 2, new_draft: true, source_id: map.id, source_version: 1 },
    });

    const wrong = await api(owner).post(`/api/v1/maps/${map.id}/import`, { ...doc, workflow: "another" });
    expectError(wrong, 422, "validation_failed");
    expect(fieldsOf(wrong)[0]).toMatchObject({
      path: "workflow",
      message: expect.stringMatching(/import it as a new map/),
    });
    expect((await getMap(owner, map.id)).version).toBe(2);
  });
});

describe("who may take the new map actions", () => {
  let t: FullTestTenant;
  let owner: Auth;
  let map: MapView;
  let doc: CustodyMapJson;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
    map = await newMap(owner);
    await editAndPublish(owner, map);
    doc = (await api(owner).get<CustodyMapJson>(`/api/v1/maps/${map.id}/export?format=json`)).body;
  });
  const actions = (): Array<[string, string, unknown]> => [
    ["PATCH", `/api/v1/maps/${map.id}`, { title: "changed" }],
    ["PATCH", `/api/v1/maps/${map.id}`, { archived: true }],
    ["POST", `/api/v1/maps/${map.id}/signoff`, { version: 1 }],
    ["POST", `/api/v1/maps/${map.id}/import`, doc],
    ["POST", `/api/v1/maps/${map.id}/layers/tools/evidence`, { kind: "document", ref: "https://wiki.example.com/x" }],
    ["DELETE", `/api/v1/maps/${map.id}/layers/tools/evidence/00000000-0000-4000-8000-000000000000`, undefined],
    ["PUT", `/api/v1/maps/${map.id}/layers/tools/assignee`, { assignee: null }],
    ["POST", `/api/v1/maps/${map.id}/layers/tools/comments`, { text: "a comment" }],
  ];

  it("a viewer is refused every one (403) and nothing is written", async () => {
    const viewer = await signInAs(t, "viewer");
    const before = (await auditRows(handle.db, t.tenantId)).length;
    for (const [method, path, body] of actions()) {
      expectError(await api(viewer).request(method, path, body === undefined ? {} : { json: body }), 403, "forbidden");
    }
    expect((await auditRows(handle.db, t.tenantId)).length).toBe(before);
    const view = await getMap(owner, map.id);
    expect(view).toMatchObject({ archived_at: null, version: 1, status: "published" });
    expect(view.versions[0]!.signed_off_by).toBeNull();
  });

  it("a responder comments but edits, archives, imports and signs off nothing (403)", async () => {
    const responder = await signInAs(t, "responder");
    for (const [method, path, body] of actions()) {
      const res = await api(responder).request(method, path, body === undefined ? {} : { json: body });
      if (path.endsWith("/comments")) expect(res.status, res.text).toBe(200);
      else expectError(res, 403, "forbidden");
    }
  });

  it("another tenant's owner gets 404 on every one, and this map is untouched", async () => {
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const stranger = await signInAs(other, "owner");
    for (const [method, path, body] of actions()) {
      expectError(
        await api(stranger).request(method, path, body === undefined ? {} : { json: body }),
        404,
        "not_found",
      );
    }
    const view = await getMap(owner, map.id);
    expect(view).toMatchObject({ title: map.title, archived_at: null, version: 1 });
    expect(view.work.tools.evidence_items).toEqual([]);
    expect((await auditRows(handle.db, other.tenantId)).filter((a) => a.target.includes(map.id))).toEqual([]);
  });

  it("a runtime key is refused every one (403)", async () => {
    for (const [method, path, body] of actions()) {
      expectError(
        await api(t.apiKey).request(method, path, body === undefined ? {} : { json: body }),
        403,
        "forbidden",
      );
    }
  });
});
