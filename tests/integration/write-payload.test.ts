/**
 * What a person reconciles or approves is in view (decision 0045): an intent's payload is kept beside its effect
 * (checked against its digest first, secrets redacted) and served, pretty and bounded, to the reconcile dialog; a
 * payload whose digest does not match is refused at intent time and nothing of it is kept.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { toolCallDigest } from "@/lib/domain/crypto/canonical";
import { checkpoint, intentBody, newKey, postIntent } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { api, createTestTenant, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();

type Payload = { payload_digest: string | null; source: string | null; text: string | null; truncated: boolean };

const payloadPath = (taskId: string, name: string) =>
  `/api/v1/tasks/${encodeURIComponent(taskId)}/side-effects/${name}/payload`;

async function keptRows(tenantId: string, taskId: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from side_effect_payloads where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  return row?.n ?? 0;
}

describe("the payload of a write", () => {
  it("is kept from the intent and served pretty to the task's readers, and to no other workspace", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("payload");
    await checkpoint(t, taskId);
    const payload = {
      record_id: "case-918",
      fields: { status: "reviewed", note: "x".repeat(300) },
    };
    const go = await postIntent(
      t.apiKey,
      taskId,
      "update_record",
      intentBody(newKey(), { payload, payload_digest: toolCallDigest("update_record", payload) }),
    );
    expect(go.status, go.text).toBe(200);
    const responder = await signInAs(t, "responder");
    const res = await api(responder).get<Payload>(payloadPath(taskId, "update_record"));
    expect(res.status, res.text).toBe(200);
    expect(res.body.source).toBe("intent");
    expect(res.body.truncated).toBe(false);
    expect(res.body.text).toContain('"record_id": "case-918"');
    expect(res.body.text).toContain(`"note": "${"x".repeat(300)}"`);

    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const cross = await api(other.apiKey).get(payloadPath(taskId, "update_record"));
    expect(cross.status, cross.text).toBe(404);
    expect(cross.text).not.toContain("case-918");
  });

  it("says so when the intent sent only a digest", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("payload-digest-only");
    await checkpoint(t, taskId);
    const go = await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey()));
    expect(go.status, go.text).toBe(200);
    const res = await api(t.apiKey).get<Payload>(payloadPath(taskId, "update_record"));
    expect(res.body).toMatchObject({ source: null, text: null, payload_digest: "e".repeat(64) });
  });

  it("a payload whose digest does not match is refused at intent time (422) and nothing of it is kept", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("payload-mismatch");
    await checkpoint(t, taskId);
    const res = await postIntent(
      t.apiKey,
      taskId,
      "update_record",
      intentBody(newKey(), {
        payload: { record_id: "case-1" },
        payload_digest: toolCallDigest("update_record", { record_id: "case-2" }),
      }),
    );
    expect(res.status, res.text).toBe(422);
    expect((res.body as unknown as { error: { code: string } }).error.code).toBe("payload_digest_mismatch");
    expect(await keptRows(t.tenantId, taskId)).toBe(0);
    expect((await api(t.apiKey).get(payloadPath(taskId, "update_record"))).status).toBe(404);
  });
});
