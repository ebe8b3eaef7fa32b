/**
 * Artifacts you can open (decision 0045): a runtime uploads an artifact's bytes under their sha256, the server checks
 * the digest and the size limit, stores them once per tenant behind the artifact store, and serves a bounded preview
 * and an attachment download to whoever may read the task. Bytes a database writer changed are never served.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openDatabase, queryRows } from "@/db";
import type { ArtifactPreview, ArtifactView } from "@/lib/contract/api";
import { DEFAULT_ARTIFACT_MAX_BYTES } from "@/lib/config/artifacts";
import { databaseArtifactStore } from "@/lib/domain/artifacts/artifact-store";
import { uploadArtifactContent } from "@/lib/domain/artifacts/upload";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { api, baseUrl, createTestTenant, newTaskId, testDbForFile, type Auth, type TestTenant } from "./helpers";

const handle = testDbForFile();

const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

function contentPath(taskId: string, digest: string): string {
  return `/api/v1/tasks/${encodeURIComponent(taskId)}/artifacts/${digest}/content`;
}

/** PUT of raw bytes (fetch directly: the test client sends text). */
async function upload(auth: Auth, taskId: string, digest: string, bytes: Buffer) {
  const headers: Record<string, string> = { "content-type": "application/octet-stream" };
  if (typeof auth === "string") headers.authorization = `Bearer ${auth}`;
  else if (auth) headers.cookie = auth.cookie;
  const res = await fetch(`${baseUrl()}${contentPath(taskId, digest)}`, {
    method: "PUT",
    headers,
    body: new Uint8Array(bytes),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null, text };
}

async function storedRows(tenantId: string, digest: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from artifact_contents where tenant_id = ${tenantId} and sha256 = ${digest}`,
  );
  return row?.n ?? 0;
}

/** A task whose checkpoint lists `files` (ref → bytes and media type). */
async function taskWith(t: TestTenant, files: Array<{ ref: string; bytes: Buffer; media_type?: string }>) {
  const taskId = newTaskId("artifact");
  await checkpoint(t, taskId, {
    artifacts: files.map((f) => ({
      ref: f.ref,
      sha256: sha(f.bytes),
      size: f.bytes.length,
      ...(f.media_type ? { media_type: f.media_type } : {}),
    })),
  });
  return taskId;
}

describe("uploading an artifact's bytes", () => {
  it("stores bytes that hash to the digest once (201), and the same bytes again store nothing (200)", async () => {
    const t = await createTestTenant(handle.db);
    const bytes = Buffer.from("# Report\n\nAll fine.\n");
    const taskId = await taskWith(t, [{ ref: "out/report.md", bytes, media_type: "text/markdown" }]);
    const first = await upload(t.apiKey, taskId, sha(bytes), bytes);
    expect(first.status, first.text).toBe(201);
    expect(first.body).toEqual({ sha256: sha(bytes), size: bytes.length, created: true });
    const again = await upload(t.apiKey, taskId, sha(bytes), bytes);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ created: false });
    expect(await storedRows(t.tenantId, sha(bytes))).toBe(1);
    const [audit] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from audit_log where tenant_id = ${t.tenantId} and action = 'artifact.uploaded'`,
    );
    expect(audit?.n).toBe(1);
    const list = await api(t.apiKey).get<{ artifacts: ArtifactView[] }>(`/api/v1/tasks/${taskId}/artifacts`);
    expect(list.body.artifacts.map((a) => a.content)).toEqual(["stored"]);
  });

  it("refuses bytes that hash to another digest with 422 content_digest_mismatch, writing nothing", async () => {
    const t = await createTestTenant(handle.db);
    const bytes = Buffer.from("the real bytes");
    const taskId = await taskWith(t, [{ ref: "out/a.txt", bytes }]);
    const claimed = sha("other bytes");
    const res = await upload(t.apiKey, taskId, claimed, bytes);
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({
      error: { code: "content_digest_mismatch", details: { sha256: claimed, computed_sha256: sha(bytes) } },
    });
    expect(await storedRows(t.tenantId, claimed)).toBe(0);
    expect(await storedRows(t.tenantId, sha(bytes))).toBe(0);
    const bad = await upload(t.apiKey, taskId, "ABC", bytes);
    expect(bad.status, bad.text).toBe(422);
    expect(bad.body).toMatchObject({ error: { code: "validation_failed" } });
  });

  it("refuses bytes over the limit with 413 before storing anything", async () => {
    const t = await createTestTenant(handle.db);
    const big = Buffer.alloc(DEFAULT_ARTIFACT_MAX_BYTES + 1, 0x61);
    const taskId = await taskWith(t, [{ ref: "out/big.txt", bytes: big }]);
    const res = await upload(t.apiKey, taskId, sha(big), big);
    expect(res.status, res.text).toBe(413);
    expect(res.body).toMatchObject({ error: { code: "payload_too_large" } });
    expect(await storedRows(t.tenantId, sha(big))).toBe(0);
    // At the limit it is taken.
    const edge = Buffer.alloc(DEFAULT_ARTIFACT_MAX_BYTES, 0x62);
    const ok = await upload(t.apiKey, taskId, sha(edge), edge);
    expect(ok.status, ok.text).toBe(201);
  }, 120_000);

  it("the same bytes raced by four senders at the limit: one row, every answer 201 or 200, the gate answers meanwhile", async () => {
    const t = await createTestTenant(handle.db);
    const bytes = Buffer.alloc(DEFAULT_ARTIFACT_MAX_BYTES, 0x63);
    const taskId = await taskWith(t, [{ ref: "out/raced.txt", bytes }]);
    const uploads = Array.from({ length: 4 }, () => upload(t.apiKey, taskId, sha(bytes), bytes));
    const t0 = Date.now();
    const gate = await api(t.apiKey).post(`/api/v1/tasks/${encodeURIComponent(taskId)}/resume`, {});
    const gateMs = Date.now() - t0;
    const answers = await Promise.all(uploads);
    expect(gate.status, gate.text).toBe(200);
    expect(gateMs).toBeLessThan(15_000);
    expect(answers.map((a) => a.status).sort()).toEqual(expect.arrayContaining([201]));
    expect(
      answers.every((a) => a.status === 201 || a.status === 200),
      answers.map((a) => a.text).join("\n"),
    ).toBe(true);
    expect(await storedRows(t.tenantId, sha(bytes))).toBe(1);
  }, 120_000);

  it("a digest in another shape (upper case, short, not hex) is a 4xx and stores nothing", async () => {
    const t = await createTestTenant(handle.db);
    const bytes = Buffer.from("hello");
    const taskId = await taskWith(t, [{ ref: "out/hello.txt", bytes }]);
    for (const digest of [sha(bytes).toUpperCase(), sha(bytes).slice(0, 63), `${"z".repeat(64)}`]) {
      const res = await upload(t.apiKey, taskId, digest, bytes);
      expect(res.status, `${digest}: ${res.text}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${digest}: ${res.text}`).toBeLessThan(500);
    }
    expect(await storedRows(t.tenantId, sha(bytes))).toBe(0);
  });

  it("is for the runtime key of the task's tenant: people get 403, another tenant's key 404, no key 401", async () => {
    const t = await createTestTenant(handle.db);
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const bytes = Buffer.from('{"a": 1}');
    const taskId = await taskWith(t, [{ ref: "out/a.json", bytes, media_type: "application/json" }]);
    for (const role of ["owner", "responder", "viewer"] as const) {
      const res = await upload(await signInAs(t, role), taskId, sha(bytes), bytes);
      expect(res.status, `${role}: ${res.text}`).toBe(403);
    }
    const cross = await upload(other.apiKey, taskId, sha(bytes), bytes);
    expect(cross.status, cross.text).toBe(404);
    const anon = await upload(undefined, taskId, sha(bytes), bytes);
    expect(anon.status, anon.text).toBe(401);
    expect(await storedRows(t.tenantId, sha(bytes))).toBe(0);
    expect(await storedRows(other.tenantId, sha(bytes))).toBe(0);
  });
});

describe("uploading to another workspace's task", () => {
  it("answers 404 before looking at the bytes: whatever they hash to, another workspace learns only that there is no such task", async () => {
    const t = await createTestTenant(handle.db);
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const bytes = Buffer.from("probe");
    const taskId = await taskWith(t, [{ ref: "out/p.txt", bytes }]);
    const actor = { kind: "api_key" as const, tenantId: other.tenantId, keyId: "k", keyName: "other" };
    await expect(
      uploadArtifactContent({ db: handle.db, actor }, { taskId, sha256: sha("something else"), bytes }),
    ).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("reading an artifact's bytes", () => {
  it("previews Markdown, JSON (pretty) and text, and downloads them as attachments with nosniff", async () => {
    const t = await createTestTenant(handle.db);
    const md = Buffer.from("# Title\n\n<script>alert(1)</script>\n");
    const json = Buffer.from('{"b":[1,2],"a":"x"}');
    const txt = Buffer.from("plain\ntext");
    const taskId = await taskWith(t, [
      { ref: "s3://out/report.md", bytes: md, media_type: "text/markdown" },
      { ref: "out/data.json", bytes: json },
      { ref: "out/notes.txt", bytes: txt, media_type: "text/plain" },
    ]);
    for (const b of [md, json, txt]) expect((await upload(t.apiKey, taskId, sha(b), b)).status).toBe(201);
    const viewer = await signInAs(t, "viewer");
    const p = await api(viewer).get<ArtifactPreview>(`/api/v1/tasks/${taskId}/artifacts/${sha(md)}`);
    expect(p.status, p.text).toBe(200);
    expect(p.body).toMatchObject({ kind: "markdown", content: "stored", text: md.toString(), truncated: false });
    const j = await api(viewer).get<ArtifactPreview>(`/api/v1/tasks/${taskId}/artifacts/${sha(json)}`);
    expect(j.body).toMatchObject({ kind: "json", text: JSON.stringify({ b: [1, 2], a: "x" }, null, 2) });
    const x = await api(viewer).get<ArtifactPreview>(`/api/v1/tasks/${taskId}/artifacts/${sha(txt)}`);
    expect(x.body).toMatchObject({ kind: "text", text: "plain\ntext" });

    const dl = await api(viewer).get(contentPath(taskId, sha(md)));
    expect(dl.status, dl.text).toBe(200);
    expect(dl.text).toBe(md.toString());
    expect(dl.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(dl.headers.get("content-disposition")).toMatch(/^attachment; filename="report\.md"/);
    expect(dl.headers.get("x-content-type-options")).toBe("nosniff");
    const dj = await api(t.apiKey).get(contentPath(taskId, sha(json)));
    expect(dj.headers.get("content-type")).toBe("application/json");
  });

  it("caps the preview of a large artifact and says so", async () => {
    const t = await createTestTenant(handle.db);
    const long = Buffer.from(`${"line of text ".repeat(20_000)}\n`);
    const taskId = await taskWith(t, [{ ref: "out/long.log", bytes: long }]);
    expect((await upload(t.apiKey, taskId, sha(long), long)).status).toBe(201);
    const p = await api(t.apiKey).get<ArtifactPreview>(`/api/v1/tasks/${taskId}/artifacts/${sha(long)}`);
    expect(p.body.truncated).toBe(true);
    expect(p.body.text!.length).toBeLessThanOrEqual(64 * 1024);
  });

  it("shows another tenant nothing: 404 for the preview and the download, even for bytes it uploaded itself", async () => {
    const t = await createTestTenant(handle.db);
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const bytes = Buffer.from("secret report of tenant A");
    const taskId = await taskWith(t, [{ ref: "out/secret.txt", bytes }]);
    expect((await upload(t.apiKey, taskId, sha(bytes), bytes)).status).toBe(201);
    const otherOwner = await signInAs(other, "owner");
    for (const auth of [other.apiKey, otherOwner] as Auth[]) {
      const p = await api(auth).get(`/api/v1/tasks/${taskId}/artifacts/${sha(bytes)}`);
      expect(p.status, p.text).toBe(404);
      expect(p.text).not.toContain("secret report");
      const d = await api(auth).get(contentPath(taskId, sha(bytes)));
      expect(d.status, d.text).toBe(404);
      expect(d.text).not.toContain("secret report");
    }
    // Tenant B's own task listing the same digest does not reach tenant A's bytes: B never uploaded them.
    const bTask = await taskWith(other, [{ ref: "out/secret.txt", bytes }]);
    const mine = await api(other.apiKey).get<ArtifactPreview>(`/api/v1/tasks/${bTask}/artifacts/${sha(bytes)}`);
    expect(mine.body).toMatchObject({ content: "missing", text: null });
    expect((await api(other.apiKey).get(contentPath(bTask, sha(bytes)))).status).toBe(404);
  });

  it("bytes a database writer changed are a stop: listed as mismatch, no preview, download 409", async () => {
    const t = await createTestTenant(handle.db);
    const bytes = Buffer.from("# Report v1\n");
    const taskId = await taskWith(t, [{ ref: "out/report.md", bytes, media_type: "text/markdown" }]);
    expect((await upload(t.apiKey, taskId, sha(bytes), bytes)).status).toBe(201);
    await queryRows(
      handle.db,
      sql`update artifact_contents set bytes = ${Buffer.from("# Report v2, forged\n")}
          where tenant_id = ${t.tenantId} and sha256 = ${sha(bytes)}`,
    );
    const list = await api(t.apiKey).get<{ artifacts: ArtifactView[] }>(`/api/v1/tasks/${taskId}/artifacts`);
    expect(list.body.artifacts[0]?.content).toBe("mismatch");
    const p = await api(t.apiKey).get<ArtifactPreview>(`/api/v1/tasks/${taskId}/artifacts/${sha(bytes)}`);
    expect(p.body).toMatchObject({ content: "mismatch", text: null });
    const d = await api(t.apiKey).get(contentPath(taskId, sha(bytes)));
    expect(d.status, d.text).toBe(409);
    expect(d.text).not.toContain("forged");
    // The runtime uploading the real bytes again repairs the row (201); then they are served again.
    const again = await upload(t.apiKey, taskId, sha(bytes), bytes);
    expect(again.status, again.text).toBe(201);
    const fixed = await api(t.apiKey).get(contentPath(taskId, sha(bytes)));
    expect(fixed.text).toBe(bytes.toString());
  });

  it("a digest the task does not list, or bytes never uploaded, is 404", async () => {
    const t = await createTestTenant(handle.db);
    const bytes = Buffer.from("listed, not uploaded");
    const taskId = await taskWith(t, [{ ref: "out/x.txt", bytes }]);
    const p = await api(t.apiKey).get<ArtifactPreview>(`/api/v1/tasks/${taskId}/artifacts/${sha(bytes)}`);
    expect(p.body).toMatchObject({ content: "missing" });
    expect((await api(t.apiKey).get(contentPath(taskId, sha(bytes)))).status).toBe(404);
    expect((await api(t.apiKey).get(`/api/v1/tasks/${taskId}/artifacts/${sha("unlisted")}`)).status).toBe(404);
  });
});

describe("the artifact store on the embedded database", () => {
  it("keeps the bytes in the data directory: put, has, get after reopening, and a changed row reads as not intact", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-artifacts-"));
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252]);
    const digest = sha(bytes);
    const tenantId = "11111111-1111-4111-8111-111111111111";
    try {
      let h = await openDatabase({ dir });
      await queryRows(h.db, sql`insert into tenants (id, slug, name) values (${tenantId}, 'store-test', 'Store test')`);
      const store = databaseArtifactStore(h.db);
      expect(await store.put(tenantId, digest, bytes)).toEqual({ created: true });
      expect(await store.put(tenantId, digest, bytes)).toEqual({ created: false });
      await h.close();
      h = await openDatabase({ dir });
      const again = databaseArtifactStore(h.db);
      expect((await again.get(tenantId, digest))?.bytes.equals(bytes)).toBe(true);
      expect(await again.has(tenantId, [digest, sha("none")])).toEqual(
        new Map([[digest, { size: bytes.length, intact: true }]]),
      );
      await queryRows(h.db, sql`update artifact_contents set bytes = ${Buffer.from("x")} where sha256 = ${digest}`);
      expect((await again.has(tenantId, [digest])).get(digest)?.intact).toBe(false);
      await h.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
