/**
 * Rows that nothing signs (docs/decisions/0035-rows-a-database-writer-changes.md), on real PostgreSQL through the built
 * server. Each case writes to the database as its owner, as someone with write access but without the server's signing
 * key would, and checks that the server notices: a cut-off audit log is reported at once.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { api, createTestTenant, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();

type Verify = {
  valid: boolean;
  checked: number;
  message?: string;
  first_bad_entry?: { seq: number };
  truncated?: { recorded_seq: number; last_seq: number };
};

describe("rows a database writer changes", () => {
  it("audit verification compares the chain's end with its recorded head: deleting the newest entries is reported at once", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    await checkpoint(t, taskId, { phase: "two" });
    await checkpoint(t, taskId, { phase: "three" });
    const owner = await signInAs(t, "owner");
    const before = await api(owner).get<Verify>("/api/v1/audit/verify");
    expect(before.body, before.text).toMatchObject({ valid: true });
    const total = before.body.checked;
    expect(total).toBeGreaterThanOrEqual(3);

    // The writer deletes the two newest entries (the trigger that forbids it is the owner's to disable).
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`alter table audit_log disable trigger audit_log_no_update_delete`);
      await tx.execute(sql`delete from audit_log where tenant_id = ${t.tenantId} and seq > ${total - 2}`);
      await tx.execute(sql`alter table audit_log enable trigger audit_log_no_update_delete`);
    });

    const after = await api(owner).get<Verify>("/api/v1/audit/verify");
    expect(after.status, after.text).toBe(200);
    expect(after.body.valid).toBe(false);
    expect(after.body.checked).toBe(total - 2);
    expect(after.body.first_bad_entry?.seq).toBe(total - 1);
    expect(after.body.truncated).toMatchObject({ recorded_seq: total, last_seq: total - 2 });
    expect(after.body.message).toMatch(/2 entries were deleted from the end of the log/);
  });
});
