/**
 * The demo records service (scripts/records-service.ts): an update is applied once per Idempotency-Key, a
 * repeat is answered from the stored result, a reused key with another body is refused, and the lookup
 * endpoint answers what happened for a key. Real HTTP on a free loopback port, temp state file.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  resultDigest,
  startRecordsService,
  type RecordsService,
  type RecordUpdateResult,
} from "../../scripts/records-service";

let service: RecordsService;
let dir: string;
let stateFile: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "records-service-test-"));
  stateFile = path.join(dir, "state.json");
  service = await startRecordsService({ port: 0, stateFile });
});

afterAll(async () => {
  await service?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function put(recordId: string, body: unknown, key?: string) {
  return fetch(`${service.url}/records/${recordId}`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify(body),
  });
}

async function getRecord(recordId: string) {
  const res = await fetch(`${service.url}/records/${recordId}`);
  return { status: res.status, body: (await res.json()) as { update_count?: number; data?: Record<string, unknown> } };
}

describe("records service", () => {
  it("applies an update once per Idempotency-Key and replays the stored result", async () => {
    const first = await put("REC-1", { status: "reviewed" }, "key-rec-1-a");
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const applied = (await first.json()) as RecordUpdateResult;
    expect(applied).toMatchObject({ record_id: "REC-1", update_count: 1 });
    expect(applied.operation_id).toMatch(/^op-[0-9a-f]+$/);

    const again = await put("REC-1", { status: "reviewed" }, "key-rec-1-a");
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(applied);

    const record = await getRecord("REC-1");
    expect(record.status).toBe(200);
    expect(record.body.update_count).toBe(1);
    expect(record.body.data).toEqual({ status: "reviewed" });
  });

  it("applies concurrent identical requests once", async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => put("REC-2", { status: "x" }, "key-rec-2")));
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as RecordUpdateResult[];
    expect(new Set(bodies.map((b) => b.operation_id)).size).toBe(1);
    expect(answers.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(9);
    expect((await getRecord("REC-2")).body.update_count).toBe(1);
  });

  it("counts updates under different keys separately", async () => {
    await put("REC-3", { status: "a" }, "key-rec-3-a");
    await put("REC-3", { status: "b" }, "key-rec-3-b");
    const record = await getRecord("REC-3");
    expect(record.body.update_count).toBe(2);
    expect(record.body.data).toEqual({ status: "b" });
  });

  it("refuses a reused key with a different body or record (422) and applies nothing", async () => {
    expect((await put("REC-4", { status: "reviewed" }, "key-rec-4")).status).toBe(200);
    const otherBody = await put("REC-4", { status: "rejected" }, "key-rec-4");
    expect(otherBody.status).toBe(422);
    expect(((await otherBody.json()) as { error: { code: string } }).error.code).toBe("idempotency_key_mismatch");
    const otherRecord = await put("REC-5", { status: "reviewed" }, "key-rec-4");
    expect(otherRecord.status).toBe(422);
    expect((await getRecord("REC-4")).body).toMatchObject({ update_count: 1, data: { status: "reviewed" } });
    expect((await getRecord("REC-5")).status).toBe(404);
  });

  it("requires an Idempotency-Key and a JSON object body", async () => {
    const noKey = await put("REC-6", { status: "reviewed" });
    expect(noKey.status).toBe(400);
    expect(((await noKey.json()) as { error: { code: string } }).error.code).toBe("missing_idempotency_key");
    const notObject = await put("REC-6", [1, 2], "key-rec-6");
    expect(notObject.status).toBe(400);
    expect((await getRecord("REC-6")).status).toBe(404);
  });

  it("answers the lookup by idempotency key: found with the receipt, or not found", async () => {
    const res = await put("REC-7", { status: "reviewed" }, "key-rec-7");
    const applied = (await res.json()) as RecordUpdateResult;
    const found = await (await fetch(`${service.url}/lookup?idempotency_key=key-rec-7`)).json();
    expect(found).toEqual({
      found: true,
      external_operation_id: applied.operation_id,
      result_digest: resultDigest(applied),
      completed_at: applied.applied_at,
      record_id: "REC-7",
      applied_count: 1,
    });
    expect(found.result_digest).toMatch(/^[0-9a-f]{64}$/);
    const missing = await (await fetch(`${service.url}/lookup?idempotency_key=never-used`)).json();
    expect(missing).toEqual({ found: false });
    expect((await fetch(`${service.url}/lookup`)).status).toBe(400);
  });

  it("keeps its state across restarts (state file)", async () => {
    await put("REC-8", { status: "reviewed" }, "key-rec-8");
    const second = await startRecordsService({ port: 0, stateFile });
    try {
      const replay = await fetch(`${second.url}/records/REC-8`, {
        method: "PUT",
        headers: { "content-type": "application/json", "idempotency-key": "key-rec-8" },
        body: JSON.stringify({ status: "reviewed" }),
      });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      const record = (await (await fetch(`${second.url}/records/REC-8`)).json()) as { update_count: number };
      expect(record.update_count).toBe(1);
    } finally {
      await second.close();
    }
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("answers health", async () => {
    const res = await fetch(`${service.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });
});
