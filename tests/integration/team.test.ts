/**
 * A real team in one workspace, over HTTP against the built server: an owner invites people with one-time links
 * (only a hash stored; 7 days; single use; a used, expired or withdrawn link is 410), the link sets the password,
 * the person signs in with their role; roles change on the next request; a removed member's sessions end at once
 * while their past decisions keep their name; the last owner stays; admins cannot touch the owner role; a person
 * in two workspaces switches between them and each request works in exactly one; a person changes their own
 * password. Every refusal names its rule, and every new route refuses the wrong role and the wrong tenant.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { Role } from "@/db/schema/enums";
import type { TaskList } from "@/lib/contract/api";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
import type { AccountView } from "@/lib/domain/tenancy/account";
import type { InviteResult } from "@/lib/domain/tenancy/invitations";
import type { MemberView } from "@/lib/domain/tenancy/members";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { auditRows } from "./support/stored-rows";
import {
  api,
  baseUrl,
  createTestTenant,
  makeRecord,
  newTaskId,
  rid,
  signIn,
  trySignIn,
  testDbForFile,
  type Auth,
  type FullTestTenant,
} from "./helpers";

const handle = testDbForFile();
const PASSWORD = "correct horse battery staple";

type MembersBody = {
  members: MemberView[];
  invitations: Array<{ id: string; email: string; role: Role; expires_at: string }>;
};

const tokenOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);

async function invite(auth: Auth, email: string, role: Role) {
  return api(auth).post<InviteResult>("/api/v1/settings/invitations", { email, role });
}

async function accept(token: string, body: unknown) {
  return api().post<{
    user_id: string;
    email: string;
    role: Role;
    account_created: boolean;
    workspace: { id: string; slug: string };
  }>(`/api/v1/invitations/${token}/accept`, body);
}

async function members(auth: Auth): Promise<MembersBody> {
  const res = await api(auth).get<MembersBody>("/api/v1/settings/members");
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function me(auth: Auth) {
  return api(auth).get<AccountView>("/api/v1/me");
}

async function auditCount(tenantId: string): Promise<number> {
  return (await auditRows(handle.db, tenantId)).length;
}

describe("inviting a person", () => {
  it("gives the owner a one-time link (only its hash stored) that sets the password; the person signs in with the role", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const email = `ada-${rid()}@${t.slug}.test`;

    const inv = await invite(owner, email.toUpperCase(), "approver");
    expect(inv.status, inv.text).toBe(200);
    const token = tokenOf(inv.body.invitation_url);
    expect(inv.body.invitation_url).toBe(`${baseUrl()}/invitations/${token}`);
    expect(token).toMatch(/^rci_[A-Za-z0-9_-]{43}$/);
    expect(inv.body.invitation).toMatchObject({ email, role: "approver", invited_by: t.users.owner!.email });
    const days = (Date.parse(inv.body.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    // Only the hash is stored; neither the invitation row nor the audit entry holds the token.
    const rows = await queryRows<Record<string, unknown>>(
      handle.db,
      sql`select * from invitations where tenant_id = ${t.tenantId}`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(sha256Hex(token));
    expect(JSON.stringify(rows)).not.toContain(token);
    const [created] = await auditRows(handle.db, t.tenantId, "invitation.created");
    expect(created).toMatchObject({ actor_label: t.users.owner!.email, details: { email, role: "approver" } });
    expect(JSON.stringify(await auditRows(handle.db, t.tenantId))).not.toContain(token);
    expect((await members(owner)).invitations.map((i) => i.email)).toEqual([email]);

    // The link's page says what it is for.
    const page = await api().get(`/invitations/${token}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`Test tenant ${t.slug}`);
    expect(page.text).toContain("approver");
    expect(page.text).toContain("Set password and join");

    // A weak password is refused naming the field, and the link stays usable.
    const weak = await accept(token, { password: "short" });
    expectError(weak, 422, "validation_failed");
    expect(weak.text).toContain("password");
    expectError(await accept(token, { password: PASSWORD, role: "owner" }), 422, "validation_failed");
    expectError(await accept(token, { password: email }), 422, "validation_failed");

    const ok = await accept(token, { password: PASSWORD, name: "Ada Approver" });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({
      email,
      role: "approver",
      account_created: true,
      workspace: { id: t.tenantId, slug: t.slug },
    });
    const [user] = await queryRows<{ password_hash: string; name: string }>(
      handle.db,
      sql`select password_hash, name from users where email = ${email}`,
    );
    expect(user!.password_hash).toMatch(/^\$argon2id\$/);
    expect(user!.name).toBe("Ada Approver");

    // Single use: 410, and the page says so.
    const again = await accept(token, { password: PASSWORD });
    expectError(again, 410, "gone");
    expect(again.body).toMatchObject({ error: { details: { reason: "used" } } });
    expect((await api().get(`/invitations/${token}`)).text).toContain("already used");
    expectError(await accept(`rci_${"x".repeat(43)}`, { password: PASSWORD }), 404, "not_found");

    const session = { cookie: await signIn(email, PASSWORD) };
    const who = await me(session);
    expect(who.status, who.text).toBe(200);
    expect(who.body).toMatchObject({
      email,
      role: "approver",
      workspace: { tenant_id: t.tenantId, slug: t.slug, current: true },
    });
    const listed = (await members(owner)).members.find((m) => m.email === email)!;
    expect(listed).toMatchObject({ role: "approver", revoked: false, name: "Ada Approver" });
    expect((await members(owner)).invitations).toEqual([]);
    const [accepted] = await auditRows(handle.db, t.tenantId, "invitation.accepted");
    expect(accepted).toMatchObject({
      actor_kind: "user",
      actor_label: email,
      target: `user:${ok.body.user_id}`,
      details: { role: "approver" },
    });

    // POST /settings/members adds a person the same way.
    const viaMembers = await api(owner).post<InviteResult>("/api/v1/settings/members", {
      email: `vic-${rid()}@${t.slug}.test`,
      role: "viewer",
    });
    expect(viaMembers.status, viaMembers.text).toBe(200);
    expect(viaMembers.body.invitation_url).toMatch(/\/invitations\/rci_/);
  });

  it("answers 410 to an expired or withdrawn link; a newer link for the same email replaces the older one", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const email = `late-${rid()}@${t.slug}.test`;
    const first = tokenOf((await invite(owner, email, "responder")).body.invitation_url);
    const second = tokenOf((await invite(owner, email, "viewer")).body.invitation_url);
    const withdrawn = await accept(first, { password: PASSWORD });
    expectError(withdrawn, 410, "gone");
    expect(withdrawn.body).toMatchObject({ error: { details: { reason: "withdrawn" } } });

    await handle.db.execute(
      sql`update invitations set expires_at = now() - interval '1 second' where token_hash = ${sha256Hex(second)}`,
    );
    const expired = await accept(second, { password: PASSWORD });
    expectError(expired, 410, "gone");
    expect(expired.body).toMatchObject({ error: { details: { reason: "expired" } } });
    expect(expired.text).toContain("expired");
    expect((await api().get(`/invitations/${second}`)).text).toContain("has expired");
    expect((await queryRows(handle.db, sql`select 1 from users where email = ${email}`)).length).toBe(0);
    expect((await members(owner)).invitations).toEqual([]);
  });

  it("refuses a member's email (already_member) and an admin inviting an owner (not_allowed), writing nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "admin", "viewer"] });
    const owner = await signInAs(t, "owner");
    const admin = await signInAs(t, "admin");
    const before = await auditCount(t.tenantId);
    const dup = await invite(owner, t.users.viewer!.email.toUpperCase(), "responder");
    expectError(dup, 409, "already_member");
    expect(dup.body).toMatchObject({ error: { details: { rule: "already_member" } } });
    const notAllowed = await invite(admin, `boss-${rid()}@${t.slug}.test`, "owner");
    expectError(notAllowed, 403, "not_allowed");
    expect(notAllowed.body).toMatchObject({ error: { details: { rule: "not_allowed" } } });
    for (const body of [
      { email: "not-an-email", role: "viewer" },
      { email: `x-${rid()}@a.test`, role: "superuser" },
      { email: `x-${rid()}@a.test` },
      { email: `x-${rid()}@a.test`, role: "viewer", extra: 1 },
    ]) {
      expectError(await api(owner).post("/api/v1/settings/invitations", body), 422, "validation_failed");
    }
    // An admin may invite every other role.
    expect((await invite(admin, `helper-${rid()}@${t.slug}.test`, "admin")).status).toBe(200);
    expect(await auditCount(t.tenantId)).toBe(before + 1);
    expect(await queryRows(handle.db, sql`select 1 from invitations where tenant_id = ${t.tenantId}`)).toHaveLength(1);
  });

  it("lets an existing account join with its own password, never changing it; it then switches between its workspaces", async () => {
    const a = await createTestTenant(handle.db, { roles: ["owner"] });
    const b = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const person = b.users.responder!;
    const ownerA = await signInAs(a, "owner");
    const token = tokenOf((await invite(ownerA, person.email, "viewer")).body.invitation_url);
    expect((await api().get(`/invitations/${token}`)).text).toContain("already has an account");

    const wrong = await accept(token, { password: "not the password of that account" });
    expectError(wrong, 403, "forbidden");
    const ok = await accept(token, { password: b.password });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ account_created: false, role: "viewer", user_id: person.userId });

    // One task in each workspace, to see which one a request works in.
    const taskA = newTaskId("in-a");
    const taskB = newTaskId("in-b");
    expect((await api(a.apiKey).put(`/api/v1/tasks/${taskA}`, makeRecord(taskA))).status).toBe(200);
    expect((await api(b.apiKey).put(`/api/v1/tasks/${taskB}`, makeRecord(taskB))).status).toBe(200);
    const taskIds = async (auth: Auth) =>
      (await api(auth).get<TaskList>("/api/v1/tasks")).body.tasks.map((x) => x.task_id);

    const session = { cookie: await signIn(person.email, b.password, { workspace: b.tenantId }) };
    const account = (await me(session)).body;
    expect(account.workspace).toMatchObject({ tenant_id: b.tenantId, role: "responder" });
    expect(account.workspaces.map((w) => w.slug).sort()).toEqual([a.slug, b.slug].sort());
    expect(await taskIds(session)).toEqual([taskB]);

    const switched = await api(session).put<{ slug: string; role: Role }>("/api/v1/me/workspace", {
      workspace: a.slug,
    });
    expect(switched.status, switched.text).toBe(200);
    expect(switched.body).toMatchObject({ slug: a.slug, role: "viewer", current: true });
    expect((await me(session)).body).toMatchObject({ role: "viewer", workspace: { tenant_id: a.tenantId } });
    expect(await taskIds(session)).toEqual([taskA]);
    expectError(await api(session).get(`/api/v1/tasks/${taskB}`), 404, "not_found");
    // As a viewer in A the person may not do what their responder role allows in B.
    expectError(await api(session).post("/api/v1/settings/api-keys", { name: "nope" }), 403, "forbidden");

    // A second session is on its own, and the next sign-in starts in the workspace chosen last.
    const other = { cookie: await signIn(person.email, b.password) };
    expect((await me(other)).body.workspace.tenant_id).toBe(a.tenantId);
    expect((await api(other).put("/api/v1/me/workspace", { workspace: b.slug })).status).toBe(200);
    expect((await me(session)).body.workspace.tenant_id).toBe(a.tenantId);

    // A workspace the person is not in, or a runtime key: refused.
    const stranger = await createTestTenant(handle.db, { roles: [] });
    expectError(await api(session).put("/api/v1/me/workspace", { workspace: stranger.slug }), 404, "not_found");
    expectError(await api(session).put("/api/v1/me/workspace", {}), 422, "validation_failed");
    expectError(await api(a.apiKey).put("/api/v1/me/workspace", { workspace: a.slug }), 403, "forbidden");
    // The password of the account is the one it had.
    expect((await trySignIn(person.email, b.password)).cookie).not.toBeNull();
  });
});

describe("changing roles and removing members", () => {
  it("applies a role change to the member's next request, and records it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "viewer"] });
    const owner = await signInAs(t, "owner");
    const viewer = await signInAs(t, "viewer");
    const createKey = () => api(viewer).post("/api/v1/settings/api-keys", { name: `k-${rid(3)}` });
    expectError(await createKey(), 403, "forbidden");

    const up = await api(owner).patch<{ role: Role; previous_role: Role; changed: boolean; audit_seq: number }>(
      `/api/v1/settings/members/${t.users.viewer!.userId}`,
      { role: "admin" },
    );
    expect(up.status, up.text).toBe(200);
    expect(up.body).toMatchObject({ role: "admin", previous_role: "viewer", changed: true });
    expect((await createKey()).status).toBe(200);
    expect((await me(viewer)).body.role).toBe("admin");

    const same = await api(owner).patch<{ changed: boolean }>(`/api/v1/settings/members/${t.users.viewer!.userId}`, {
      role: "admin",
    });
    expect(same.body).toMatchObject({ changed: false, audit_seq: null });
    expect(
      (await api(owner).patch(`/api/v1/settings/members/${t.users.viewer!.userId}`, { role: "viewer" })).status,
    ).toBe(200);
    expectError(await createKey(), 403, "forbidden");
    const changes = await auditRows(handle.db, t.tenantId, "member.role_changed");
    expect(changes.map((c) => c.details)).toEqual([
      { email: t.users.viewer!.email, from: "viewer", to: "admin" },
      { email: t.users.viewer!.email, from: "admin", to: "viewer" },
    ]);
    expect(changes[0]!.seq).toBe(up.body.audit_seq);
    expectError(
      await api(owner).patch(`/api/v1/settings/members/${t.users.viewer!.userId}`, { role: "root" }),
      422,
      "validation_failed",
    );
    expectError(
      await api(owner).patch(`/api/v1/settings/members/${t.users.viewer!.userId}`, {}),
      422,
      "validation_failed",
    );
  });

  it("ends every session of a removed member at once (API and pages); their past decisions keep their name", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "admin"] });
    const owner = await signInAs(t, "owner");
    const admin = t.users.admin!;
    const first = await signInAs(t, "admin");
    const second = await signInAs(t, "admin");
    // A decision of theirs: an API key they created.
    expect((await api(first).post("/api/v1/settings/api-keys", { name: "made by the admin" })).status).toBe(200);
    expect((await api(first).get("/api/v1/tasks")).status).toBe(200);
    expect((await api(second).get("/tasks")).status).toBe(200);

    const removed = await api(owner).delete<{ removed: boolean; sessions_ended: number; audit_seq: number }>(
      `/api/v1/settings/members/${admin.userId}`,
    );
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toMatchObject({ removed: true, email: admin.email, role: "admin", sessions_ended: 2 });

    for (const session of [first, second]) {
      expectError(await api(session).get("/api/v1/tasks"), 401, "unauthorized");
      const page = await api(session).get("/tasks");
      expect(page.status).toBe(307);
      expect(page.headers.get("location")).toMatch(/\/login\?callbackUrl=%2Ftasks/);
    }
    const ended = await queryRows<{ ended_reason: string }>(
      handle.db,
      sql`select ended_reason from sessions where user_id = ${admin.userId} and tenant_id = ${t.tenantId}`,
    );
    expect(ended.map((r) => r.ended_reason)).toEqual(["member_removed", "member_removed"]);
    const refused = await trySignIn(admin.email, t.password);
    expect(refused.cookie).toBeNull();
    expect(decodeURIComponent(refused.url ?? "")).toContain("revoked");

    // The audit log still names them for what they did, and the member list shows them as removed.
    const [created] = await auditRows(handle.db, t.tenantId, "api_key.created");
    expect(created).toMatchObject({ actor_label: admin.email, details: { name: "made by the admin" } });
    const [entry] = await auditRows(handle.db, t.tenantId, "member.removed");
    expect(entry).toMatchObject({
      seq: removed.body.audit_seq,
      actor_label: t.users.owner!.email,
      details: { email: admin.email, role: "admin", sessions_ended: 2 },
    });
    expect((await members(owner)).members.find((m) => m.user_id === admin.userId)).toMatchObject({ revoked: true });
    expectError(await api(owner).delete(`/api/v1/settings/members/${admin.userId}`), 404, "not_found");

    // Invited again, they come back with the same account (and its own password).
    const back = await invite(owner, admin.email, "viewer");
    expect(back.status, back.text).toBe(200);
    expect((await accept(tokenOf(back.body.invitation_url), { password: t.password })).status).toBe(200);
    expect((await me({ cookie: await signIn(admin.email, t.password) })).body.role).toBe("viewer");
  });

  it("keeps the last owner, and lets only owners touch the owner role", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "admin", "viewer"] });
    const owner = await signInAs(t, "owner");
    const admin = await signInAs(t, "admin");
    const ownerId = t.users.owner!.userId;
    const before = await auditCount(t.tenantId);

    const demote = await api(owner).patch(`/api/v1/settings/members/${ownerId}`, { role: "admin" });
    expectError(demote, 409, "last_owner");
    expect(demote.body).toMatchObject({ error: { details: { rule: "last_owner" } } });
    expectError(await api(owner).delete(`/api/v1/settings/members/${ownerId}`), 409, "last_owner");

    for (const res of [
      await api(admin).patch(`/api/v1/settings/members/${ownerId}`, { role: "viewer" }),
      await api(admin).delete(`/api/v1/settings/members/${ownerId}`),
      await api(admin).patch(`/api/v1/settings/members/${t.users.viewer!.userId}`, { role: "owner" }),
      await api(admin).patch(`/api/v1/settings/members/${t.users.admin!.userId}`, { role: "owner" }),
    ]) {
      expectError(res, 403, "not_allowed");
    }
    expect(await auditCount(t.tenantId)).toBe(before);
    const roles = async () => Object.fromEntries((await members(owner)).members.map((m) => [m.email, m.role]));
    expect(await roles()).toEqual({
      [t.users.owner!.email]: "owner",
      [t.users.admin!.email]: "admin",
      [t.users.viewer!.email]: "viewer",
    });

    // An admin manages the other roles, including their own.
    expect(
      (await api(admin).patch(`/api/v1/settings/members/${t.users.viewer!.userId}`, { role: "responder" })).status,
    ).toBe(200);

    // With a second owner, either may step down, but not both at once: one of two concurrent demotions wins.
    expect(
      (await api(owner).patch(`/api/v1/settings/members/${t.users.admin!.userId}`, { role: "owner" })).status,
    ).toBe(200);
    const [x, y] = await Promise.all([
      api(owner).patch(`/api/v1/settings/members/${ownerId}`, { role: "viewer" }),
      api(admin).patch(`/api/v1/settings/members/${t.users.admin!.userId}`, { role: "viewer" }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 409]);
    expect([x, y].find((r) => r.status === 409)!.body).toMatchObject({ error: { code: "last_owner" } });
    const owners = await queryRows(
      handle.db,
      sql`select 1 from memberships where tenant_id = ${t.tenantId} and role = 'owner' and revoked_at is null`,
    );
    expect(owners).toHaveLength(1);
  });
});

describe("every new route", () => {
  it("refuses the wrong role (403), runtime keys (403) and no credentials (401), writing nothing", async () => {
    const t: FullTestTenant = await createTestTenant(handle.db);
    const target = t.users.viewer.userId;
    const before = await auditCount(t.tenantId);
    const calls: Array<[string, (auth: Auth) => ReturnType<ReturnType<typeof api>["get"]>]> = [
      [
        "POST /settings/members",
        (a) => api(a).post("/api/v1/settings/members", { email: `n-${rid()}@x.test`, role: "viewer" }),
      ],
      [
        "POST /settings/invitations",
        (a) => api(a).post("/api/v1/settings/invitations", { email: `n-${rid()}@x.test`, role: "viewer" }),
      ],
      [
        "PATCH /settings/members/{id}",
        (a) => api(a).patch(`/api/v1/settings/members/${target}`, { role: "responder" }),
      ],
      ["DELETE /settings/members/{id}", (a) => api(a).delete(`/api/v1/settings/members/${target}`)],
    ];
    for (const [name, call] of calls) {
      for (const role of ["approver", "responder", "viewer"] as const) {
        const res = await call(await signInAs(t, role));
        expect(res.status, `${name} as ${role}: ${res.text}`).toBe(403);
        expect((res.body as { error: { code: string; message: string } }).error.message).toMatch(/owner, admin/);
      }
      expectError(await call(t.apiKey), 403, "forbidden");
      expectError(await call(undefined), 401, "unauthorized");
    }
    expectError(await api(t.apiKey).get("/api/v1/settings/members"), 403, "forbidden");
    expectError(await api().get("/api/v1/settings/members"), 401, "unauthorized");
    for (const role of ["approver", "responder", "viewer"] as const)
      expect((await api(await signInAs(t, role)).get("/api/v1/settings/members")).status).toBe(200);
    expectError(await api(t.apiKey).get("/api/v1/me"), 403, "forbidden");
    expectError(await api().get("/api/v1/me"), 401, "unauthorized");
    expectError(
      await api(t.apiKey).post("/api/v1/me/password", { current_password: "x", new_password: "y".repeat(20) }),
      403,
      "forbidden",
    );
    expectError(
      await api().post("/api/v1/me/password", { current_password: "x", new_password: "y".repeat(20) }),
      401,
      "unauthorized",
    );
    expectError(await api().put("/api/v1/me/workspace", { workspace: t.slug }), 401, "unauthorized");
    expect(await auditCount(t.tenantId)).toBe(before);
    expect(await queryRows(handle.db, sql`select 1 from invitations where tenant_id = ${t.tenantId}`)).toHaveLength(0);
    expect((await members(await signInAs(t, "owner"))).members.find((m) => m.user_id === target)).toMatchObject({
      role: "viewer",
      revoked: false,
    });
  });

  it("keeps another workspace's members invisible and out of reach (404), and its owner's invitations its own", async () => {
    const a = await createTestTenant(handle.db, { roles: ["owner"] });
    const b: FullTestTenant = await createTestTenant(handle.db);
    const ownerA = await signInAs(a, "owner");
    const listed = await members(ownerA);
    expect(listed.members.map((m) => m.email)).toEqual([a.users.owner!.email]);
    const bBefore = await auditCount(b.tenantId);
    for (const role of ["viewer", "owner"] as const) {
      const id = b.users[role].userId;
      expectError(await api(ownerA).patch(`/api/v1/settings/members/${id}`, { role: "responder" }), 404, "not_found");
      expectError(await api(ownerA).delete(`/api/v1/settings/members/${id}`), 404, "not_found");
    }
    expectError(await api(ownerA).delete("/api/v1/settings/members/not-a-uuid"), 404, "not_found");
    // B's member may be invited to A (their own account then decides), but that changes nothing in B.
    expect((await invite(ownerA, b.users.viewer.email, "viewer")).status).toBe(200);
    expect((await members(await signInAs(b, "owner"))).invitations).toEqual([]);
    expect(await auditCount(b.tenantId)).toBe(bBefore);
    expect((await members(await signInAs(b, "owner"))).members.find((m) => m.role === "viewer")).toMatchObject({
      revoked: false,
    });
  });
});

describe("changing one's own password", () => {
  it("needs the current password, ends the person's other sessions, and keeps this one", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const user = t.users.responder!;
    const here = await signInAs(t, "responder");
    const elsewhere = await signInAs(t, "responder");
    const path = "/api/v1/me/password";
    const next = `new-${rid(8)}-password`;

    const wrong = await api(here).post(path, { current_password: "not it", new_password: next });
    expectError(wrong, 422, "validation_failed");
    expect(wrong.text).toContain("current_password");
    const weak = await api(here).post(path, { current_password: t.password, new_password: "short" });
    expectError(weak, 422, "validation_failed");
    expect(weak.text).toContain("new_password");
    expectError(
      await api(here).post(path, { current_password: t.password, new_password: t.password }),
      422,
      "validation_failed",
    );
    expect((await trySignIn(user.email, t.password)).cookie).not.toBeNull();

    const ok = await api(here).post<{ changed: boolean; sessions_ended: number; audit_seq: number }>(path, {
      current_password: t.password,
      new_password: next,
    });
    expect(ok.status, ok.text).toBe(200);
    // The other session and the one just opened to check the old password end; this one stays.
    expect(ok.body).toMatchObject({ changed: true, sessions_ended: 2 });
    expect((await api(here).get("/api/v1/me")).status).toBe(200);
    expectError(await api(elsewhere).get("/api/v1/me"), 401, "unauthorized");
    expect((await trySignIn(user.email, t.password)).cookie).toBeNull();
    expect((await trySignIn(user.email, next)).cookie).not.toBeNull();
    const [entry] = await auditRows(handle.db, t.tenantId, "user.password_changed");
    expect(entry).toMatchObject({
      seq: ok.body.audit_seq,
      actor_label: user.email,
      details: { email: user.email, sessions_ended: 2 },
    });
    expect(JSON.stringify(entry)).not.toContain(next);
  });
});
