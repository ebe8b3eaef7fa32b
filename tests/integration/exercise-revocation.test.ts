/**
 * The "Test revocation" step of an interruption exercise links the evidence of a "Test revocation" check
 * (docs/concepts.md#interruption-exercises, #egress-and-vault-custody; decision 0018), over HTTP against the built
 * server: a responder asks a credential's revocation endpoint (a local HTTP stub named by the active policy), the
 * check's `credential.revocation_checked` event shows in the linked task's facts and as suggested evidence of the step
 * (the suggestion the page offers), the owner links it (`event_id` on the step), and the exercise page shows it with a
 * link to the event on the task's timeline. A step may link only an event of its own task in this workspace; a refused
 * link writes nothing.
 */
import { describe, expect, it } from "vitest";
import type { StoredEvent, TimelinePage } from "@/lib/contract/api";
import type { ExerciseJson, ExerciseView, MapView } from "@/lib/contract/maps";
import { suggestionsFor } from "@/lib/domain/exercises/suggestions";
import { checkpoint } from "./support/custody-calls";
import { localServer } from "./support/local-servers";
import { signInAs } from "./support/people";
import { errorOf } from "./support/responses";
import { auditRows } from "./support/stored-rows";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, rid, testDbForFile, type Auth } from "./helpers";
import { recordsPolicy } from "../support/policy-document";

const handle = testDbForFile();

type Fields = Array<{ path: string; message: string }>;
const fieldsOf = (res: { body: unknown }) =>
  ((errorOf(res).details as { fields?: Fields } | undefined)?.fields ?? []) as Fields;

/** The page's HTML with `&amp;` and friends read back, so hrefs and text compare as written. */
const unescape = (html: string) =>
  html
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">");

describe("the Test revocation step", () => {
  it("offers the task's revocation checks as evidence, links one, and shows it on the exercise page with a link to the event", async () => {
    let answer: Record<string, unknown> = { revoked: true, revoked_at: "2026-01-02T03:04:05Z" };
    const stub = await localServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(answer));
    });
    try {
      const t = await createTestTenant(handle.db);
      const other = await createTestTenant(handle.db, { roles: ["owner"] });
      const [owner, responder, viewer] = await Promise.all([
        signInAs(t, "owner"),
        signInAs(t, "responder"),
        signInAs(t, "viewer"),
      ]);
      const taskId = newTaskId("exercise-revocation");
      const sibling = newTaskId("exercise-sibling");
      await Promise.all([checkpoint(t, taskId), checkpoint(t, sibling), checkpoint(other, newTaskId("elsewhere"))]);
      const issued = makeEvent(taskId, {
        plane: "vault",
        type: "credential.issued",
        attrs: { credential_ref: "records-api", credential_id: "cred-1", scope: "records:write" },
      });
      const siblingEvent = makeEvent(sibling, {
        plane: "vault",
        type: "credential.issued",
        attrs: { credential_ref: "records-api", credential_id: "cred-2" },
      });
      expect((await postEvents(t.apiKey, [issued, siblingEvent])).status).toBe(200);
      // The shared records policy, its credential's revocation endpoint the stub, and no tools.
      const doc = recordsPolicy((d) => {
        delete d.credentials[0]!.scope;
        d.credentials[0]!.revocation_url = `${stub.url}/revocations`;
        d.tools = [];
      });
      const policy = await api(owner).post<{ version: number; valid: boolean }>("/api/v1/policies", doc);
      expect(policy.body.valid, policy.text).toBe(true);
      expect((await api(owner).request("POST", `/api/v1/policies/${policy.body.version}/activate`)).status).toBe(200);

      // The responder tests revocation: the endpoint says revoked; later, asked again, it says it still works.
      const check = (auth: Auth) =>
        api(auth).request<{ event_id: string; outcome: string; checked_at: string }>(
          "POST",
          `/api/v1/tasks/${taskId}/credentials/records-api/revocation-check`,
        );
      const first = await check(responder);
      expect(first.status, first.text).toBe(200);
      expect(first.body.outcome).toBe("revoked");
      answer = { revoked: false };
      const second = await check(responder);
      expect(second.body.outcome).toBe("not_revoked");

      // An exercise whose Test revocation step links the task.
      const map = await api(owner).post<{ id: string }>("/api/v1/maps", {
        workflow: `revocation-${rid()}`,
        title: `Revocation map ${rid()}`,
      });
      expect(map.status, map.text).toBeLessThan(300);
      const created = await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.body.id}/exercises`, {
        interruption_point: "after_intent",
        layers: ["credentials"],
      });
      expect(created.status, created.text).toBe(200);
      const ex = created.body;
      expect(ex.steps.every((s) => s.event_id === null)).toBe(true);
      const exUrl = `/api/v1/maps/${map.body.id}/exercises/${ex.id}`;
      const stepsWith = (last: Partial<ExerciseJson["steps"][number]>) =>
        ex.steps.map((s) =>
          s.step === "test_revocation" ? { ...s, status: "passed", ...last } : { ...s, status: "passed" },
        );
      const linkedTask = await api(owner).request<ExerciseJson>("PATCH", exUrl, {
        json: { steps: stepsWith({ task_id: taskId }), revision: ex.revision },
      });
      expect(linkedTask.status, linkedTask.text).toBe(200);

      // The task's facts hold both checks, newest first, and the step's suggestions offer each as linkable evidence.
      const view = (await api(owner).get<ExerciseView>(exUrl)).body;
      const facts = view.linked_tasks.find((f) => f.task_id === taskId)!;
      expect(facts.revocation_checks).toEqual([
        expect.objectContaining({
          event_id: second.body.event_id,
          credential_ref: "records-api",
          outcome: "not_revoked",
          revoked_at: null,
          checked_by: t.users.responder.email,
          policy_version: policy.body.version,
        }),
        expect.objectContaining({
          event_id: first.body.event_id,
          credential_ref: "records-api",
          outcome: "revoked",
          revoked_at: "2026-01-02T03:04:05Z",
          checked_at: first.body.checked_at,
        }),
      ]);
      const offered = suggestionsFor("test_revocation", [facts]).filter((s) => s.apply.event_id);
      expect(offered.map((s) => s.apply.event_id)).toEqual([second.body.event_id, first.body.event_id]);
      expect(offered[1]!.text).toContain("revocation check of records-api: revoked since 2026-01-02T03:04:05Z");
      expect(offered[1]!.text).toContain(`by ${t.users.responder.email}`);
      expect(offered[0]!.text).toContain("NOT revoked");

      // Only an event of the step's own task, in this workspace, can be linked; a refused link writes nothing.
      const refusedCases: Array<[Partial<ExerciseJson["steps"][number]>, RegExp]> = [
        [{ task_id: taskId, event_id: siblingEvent.id as string }, /has no event/],
        [{ task_id: taskId, event_id: "no-such-event" }, /has no event/],
        [{ task_id: null, event_id: first.body.event_id }, /only with its task/],
      ];
      for (const [last, message] of refusedCases) {
        const refused = await api(owner).request("PATCH", exUrl, {
          json: { steps: stepsWith(last), revision: linkedTask.body.revision },
        });
        expect(refused.status, refused.text).toBe(422);
        expect(fieldsOf(refused)).toEqual([{ path: "steps.5.event_id", message: expect.stringMatching(message) }]);
      }
      // Another workspace's owner cannot reach the exercise at all.
      expect(
        (
          await api(await signInAs(other, "owner")).request("PATCH", exUrl, {
            json: {
              steps: stepsWith({ task_id: taskId, event_id: first.body.event_id }),
              revision: linkedTask.body.revision,
            },
          })
        ).status,
      ).toBe(404);
      expect((await api(owner).get<ExerciseJson>(exUrl)).body.revision).toBe(linkedTask.body.revision);

      // The owner takes the "revoked" suggestion, as the page's Link button does.
      const take = offered[1]!;
      const saved = await api(owner).request<ExerciseJson>("PATCH", exUrl, {
        json: {
          steps: stepsWith({ task_id: take.apply.task_id, event_id: take.apply.event_id, note: take.apply.note }),
          revision: linkedTask.body.revision,
        },
      });
      expect(saved.status, saved.text).toBe(200);
      expect(saved.body.steps[5]).toMatchObject({
        step: "test_revocation",
        task_id: taskId,
        event_id: first.body.event_id,
        note: take.text,
      });
      const [audit] = (await auditRows(handle.db, t.tenantId, "exercise.updated")).slice(-1);
      expect(audit!.details).toMatchObject({ revision: saved.body.revision, fields: ["steps"] });

      // The linked event is on the task's timeline, where the page's link points.
      const timeline = (await api(viewer).get<TimelinePage>(`/api/v1/tasks/${taskId}/timeline?limit=1000`)).body
        .events as StoredEvent[];
      expect(timeline.find((e) => e.id === first.body.event_id)).toMatchObject({
        plane: "vault",
        type: "credential.revocation_checked",
      });

      // The exercise page (owner editing, viewer reading) shows the linked check with a link to the event.
      const eventHref = `/tasks/${encodeURIComponent(taskId)}?event=${encodeURIComponent(first.body.event_id)}`;
      for (const who of [owner, viewer]) {
        const page = await api(who).get(`/maps/${map.body.id}/exercises/${ex.id}`);
        expect(page.status).toBe(200);
        const html = unescape(page.text);
        const linked = (html.split('data-testid="step-event"')[1] ?? "").split("</p>")[0]!;
        expect(linked, "the step's evidence event").toContain(`href="${eventHref}"`);
        expect(linked).toContain("revocation check of records-api: revoked since 2026-01-02T03:04:05Z");
      }

      // Completing keeps the link as recorded.
      const done = await api(owner).post<{ exercise: ExerciseJson }>(`${exUrl}/complete`, {
        outcome: "visible_stop",
        finding: "The revoked credential was refused; the endpoint confirmed revocation.",
        revision: saved.body.revision,
      });
      expect(done.status, done.text).toBe(200);
      expect(done.body.exercise.steps[5]!.event_id).toBe(first.body.event_id);
      // The step passed with the check it relied on, which answered revoked: Credentials is verified, and says why.
      const map2 = (await api(owner).get<MapView>(`/api/v1/maps/${map.body.id}`)).body;
      expect(map2.layers.find((l) => l.layer === "credentials")).toMatchObject({
        verification: "verified",
        verification_evidence: { kind: "exercise", ref: ex.id, note: expect.stringContaining("passed with evidence") },
      });
    } finally {
      await stub.close();
    }
  });
});
