/**
 * The round trip that proves a workspace export is usable (decision 0038): a workspace with tasks (checkpoints,
 * events), a published custody map and a policy version is exported from the suite's server, imported into another
 * database (verify first, then restore read-only under the bundle's workspace id), served by a second server whose
 * re-export the offline verifier passes; the imported workspace refuses writes (409 workspace_read_only), and a bundle
 * that does not verify, or a workspace already there, imports nothing.
 */
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase, queryRows } from "@/db";
import { importWorkspaceBundle } from "@/lib/domain/export/import-workspace";
import { isDomainError } from "@/lib/domain/errors";
import { setupWorkspace } from "@/lib/domain/tenancy/setup";
import { verifyBundle } from "@/lib/export/verify";
import { dropDatabase, ensureDatabase, freePort, serverEnv, testServerSecrets, withDatabase } from "../support/env";
import { NextServer } from "../support/next-server";
import { recordsPolicy } from "../support/policy-document";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, signIn, testDbForFile } from "./helpers";

const handle = testDbForFile();

async function download(base: string, cookie: string): Promise<Uint8Array> {
  const res = await fetch(`${base}/api/v1/export`, { headers: { cookie } });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

async function importError(db: Parameters<typeof importWorkspaceBundle>[0], bundle: Uint8Array): Promise<string> {
  try {
    await importWorkspaceBundle(db, { bundle });
  } catch (err) {
    if (isDomainError(err)) return err.code;
    throw err;
  }
  return "imported";
}

describe("a workspace bundle imported on another server", () => {
  const otherUrl = withDatabase(inject("databaseUrl"), `custody_import_${process.pid}`);
  let other: Awaited<ReturnType<typeof openDatabase>>;
  let server: NextServer;

  beforeAll(async () => {
    await dropDatabase(otherUrl).catch(() => {});
    await ensureDatabase(otherUrl);
    other = await openDatabase({ url: otherUrl, max: 2 });
    const port = await freePort();
    server = new NextServer({
      root: process.cwd(),
      port,
      env: serverEnv({ port, databaseUrl: otherUrl, ...testServerSecrets() }),
      logFile: path.join(process.cwd(), "test-results", "workspace-import-server.log"),
    });
    await server.start();
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await other?.close();
    await dropDatabase(otherUrl).catch(() => {});
  });

  it("restores tasks, maps, policies and the audit chain read-only, and its re-export verifies", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const tasks = [newTaskId("rt-a"), newTaskId("rt:b")];
    for (const id of tasks) {
      expect((await postEvents(t.apiKey, [makeEvent(id, { type: "task.created" })])).status).toBe(200);
      await checkpoint(t, id, { phase: "working" });
      await checkpoint(t, id, { phase: "done" });
    }
    const map = await api(owner).post<{ id: string }>("/api/v1/maps", { workflow: "round-trip", title: "Round trip" });
    expect(map.status, map.text).toBe(200);
    expect((await api(owner).post(`/api/v1/maps/${map.body.id}/publish`, {})).status).toBe(200);
    const policy = await api(owner).post("/api/v1/policies", recordsPolicy());
    expect(policy.status, policy.text).toBe(201);

    const bundle = await download(inject("baseUrl"), owner.cookie);
    expect((await verifyBundle(bundle)).ok).toBe(true);

    // A changed byte imports nothing.
    const broken = new Uint8Array(bundle);
    broken[broken.length - 20] = broken[broken.length - 20]! ^ 0xff;
    expect(await importError(other.db, broken)).toBe("bundle_invalid");
    expect(await queryRows(other.db, sql`select 1 from tenants where id = ${t.tenantId}`)).toHaveLength(0);

    const result = await importWorkspaceBundle(other.db, { bundle });
    expect(result.tenant_id).toBe(t.tenantId);
    expect(result.tasks).toBe(2);
    expect(result.restored.task_checkpoints).toBe(4);
    expect(result.restored.custody_maps).toBe(1);
    expect(result.restored.policy_versions).toBe(1);
    expect(await importError(other.db, bundle)).toBe("workspace_not_empty");

    // Its owner on the new server, then what it serves.
    const password = `pw-${Date.now()}-import`;
    const ownerEmail = `owner-${Date.now()}@import.test`;
    await setupWorkspace(
      other.db,
      { workspace: result.slug, name: result.name, owner: ownerEmail },
      { password, baseUrl: server.baseUrl },
    );
    const cookie = await signIn(ownerEmail, password, { base: server.baseUrl });
    const b = api({ cookie }, server.baseUrl);
    const list = await b.get<{ tasks: Array<{ task_id: string }> }>("/api/v1/tasks");
    expect(list.status, list.text).toBe(200);
    expect(list.body.tasks.map((x) => x.task_id).sort()).toEqual([...tasks].sort());
    // The checkpoints were signed by the first server's key, not this one's: they verify with the key kept at import.
    for (const id of tasks) {
      const history = await b.get<{ checkpoints: Array<{ key_id: string; signature_check: string }> }>(
        `/api/v1/tasks/${id}/checkpoints`,
      );
      expect(history.status, history.text).toBe(200);
      expect(history.body.checkpoints.map((c) => c.signature_check)).toEqual(["valid", "valid"]);
      const view = await b.get<{ signature_check: string }>(`/api/v1/tasks/${id}`);
      expect(view.body.signature_check, view.text).toBe("valid");
    }
    const serverKeys = await b.get<{ keys: Array<{ kid: string }> }>("/api/v1/signing-keys");
    const firstKid = (await b.get<{ checkpoints: Array<{ key_id: string }> }>(`/api/v1/tasks/${tasks[0]}/checkpoints`))
      .body.checkpoints[0]!.key_id;
    expect(serverKeys.body.keys.map((k) => k.kid)).not.toContain(firstKid);
    const maps = await b.get<{ maps: Array<{ id: string }> }>("/api/v1/maps");
    expect(maps.body.maps.map((m) => m.id)).toEqual([map.body.id]);
    const chain = await b.get<{ valid: boolean }>("/api/v1/audit/verify");
    expect(chain.status, chain.text).toBe(200);
    expect(chain.body.valid, chain.text).toBe(true);

    // Read-only: custody records refuse writes; people can still be managed.
    expectError(await b.post("/api/v1/maps", { workflow: "x", title: "New map" }), 409, "workspace_read_only");
    expectError(
      await b.patch(`/api/v1/maps/${map.body.id}/layers/export`, { revision: 1, handoff: "x" }),
      409,
      "workspace_read_only",
    );

    const again = await download(server.baseUrl, cookie);
    const report = await verifyBundle(again);
    expect(report.first_failure, JSON.stringify(report.first_failure)).toBeNull();
  }, 180_000);
});
