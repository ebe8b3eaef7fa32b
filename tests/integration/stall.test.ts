/**
 * No request can stall the server (decision 0008): the worst bodies the limits allow — 1 MiB of
 * text built to make pattern scans backtrack (a backtracking scan of `apikey=` repeated takes 4 s for 240 KB, growing
 * with the square of the length), on every route that takes free text — are answered, while health requests sent meanwhile each answer
 * within a generous second. Behaviour, not speed: the bound is far above what a health check costs.
 */
import { describe, expect, it } from "vitest";
import { MAX_ATTRS_BYTES } from "@/lib/domain/events/schema";
import { MAX_BODY_BYTES } from "@/lib/server/route";
import { checkpoint, intentBody, newKey, registerLookup } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { unknownEffect } from "./support/seeding";
import { api, baseUrl, createTestTenant, makeEvent, makeRecord, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();

/** Text of `length` characters made of `unit` repeated: the shapes that made backtracking scans quadratic. */
const fill = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
/** The same, as long as fits in `jsonLength` characters once written as a JSON string. */
const fillJson = (unit: string, jsonLength: number) =>
  fill(unit, Math.floor(((jsonLength - 2) * unit.length) / (JSON.stringify(unit).length - 2)));
const UNITS = [
  "apikey=",
  "password: ",
  "sk-",
  "Bearer 1 ",
  "-----BEGIN PRIVATE KEY-----",
  "a://b:c",
  "eyJaaaaaaaaaaaa.",
  "cookie:",
  '{"password":',
];

/** Polls /api/health until `stop` resolves; returns each answer's status and time in ms. */
async function pollHealth(stop: Promise<unknown>): Promise<Array<{ status: number; ms: number }>> {
  const seen: Array<{ status: number; ms: number }> = [];
  let done = false;
  void stop.finally(() => (done = true));
  while (!done || seen.length < 3) {
    const t0 = performance.now();
    const res = await fetch(`${baseUrl()}/api/health`, { signal: AbortSignal.timeout(10_000) }).catch(() => null);
    seen.push({ status: res?.status ?? 0, ms: performance.now() - t0 });
    await res?.text();
    await new Promise((r) => setTimeout(r, 50));
  }
  return seen;
}

/** Runs the requests two at a time while polling health; returns each request's status and the health answers. */
async function underLoad(requests: Array<() => Promise<{ status: number; what: string }>>) {
  const results: Array<{ status: number; what: string }> = [];
  const queue = [...requests];
  const work = Promise.all(
    [0, 1].map(async () => {
      for (let next = queue.shift(); next; next = queue.shift()) results.push(await next());
    }),
  );
  const health = await pollHealth(work);
  await work;
  return { results, health };
}

describe("the worst bodies the limits allow", () => {
  it("are answered (never 5xx) while the health route keeps answering within a second", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const owner = await signInAs(t, "owner");
    const responder = await signInAs(t, "responder");
    const { taskId: unknownTask, name: unknownName } = await unknownEffect(handle.db, t);
    const taskId = newTaskId("stall");
    await checkpoint(t, taskId);

    /** The same requests, with text made of `units`: adversarial ones, or plain prose for comparison. */
    const requests = (units: string[]): Array<() => Promise<{ status: number; what: string }>> => {
      // Events: as many as fit in 1 MiB, each with attrs just under the per-event limit, all of it scanned.
      const perEvent = MAX_ATTRS_BYTES - 200;
      const eventBodies = units.map((unit) => {
        const events = [];
        for (let i = 0; (i + 1) * (perEvent + 300) < MAX_BODY_BYTES; i++) {
          events.push(makeEvent(newTaskId("stall-ev"), { attrs: { note: fillJson(unit, perEvent) } }));
        }
        return events;
      });
      // A checkpoint of nearly 1 MiB: one free-form string in `approval`, all of it scanned for credentials.
      const recordBodies = units.map((unit) =>
        makeRecord(taskId, { approval: { note: fillJson(unit, MAX_BODY_BYTES - 2_000) } }),
      );
      return [
        ...eventBodies.map((events, i) => async () => ({
          status: (await api(t.apiKey).post("/api/v1/events", { events })).status,
          what: `events ${units[i]}`,
        })),
        ...recordBodies.map((record, i) => async () => ({
          status: (await api(t.apiKey).put(`/api/v1/tasks/${taskId}`, record)).status,
          what: `checkpoint ${units[i]}`,
        })),
        ...units.map((unit) => async () => ({
          status: (
            await api(responder).post(`/api/v1/tasks/${unknownTask}/side-effects/${unknownName}/reconcile`, {
              outcome: "not_applied",
              evidence: fill(unit, 4000),
            })
          ).status,
          what: `reconcile evidence ${unit}`,
        })),
        ...units.map((unit) => async () => ({
          status: (
            await api(owner).post("/api/v1/settings/principals/revoke", {
              principal: fill(unit, 500),
              reason: fill(unit, 1000),
            })
          ).status,
          what: `revoke ${unit}`,
        })),
        ...units.map((unit) => async () => ({
          status: (await registerLookup(owner, "records.update", `https://x.example/${fill(unit, 1990)}`)).status,
          what: `lookup url ${unit}`,
        })),
        ...units.map((unit) => async () => ({
          status: (await api(owner).post("/api/v1/settings/api-keys", { name: fill(unit, 100) })).status,
          what: `key name ${unit}`,
        })),
        ...units.map((unit) => async () => ({
          status: (
            await api(t.apiKey).post(
              `/api/v1/tasks/${taskId}/side-effects/stall_effect/intent`,
              intentBody(newKey(), { action: fill(unit, 200), tool: fill(unit, 200) }),
            )
          ).status,
          what: `intent ${unit}`,
        })),
      ];
    };
    // A body over the limit, and one nested 200,000 levels deep: refused before anything walks them.
    const refusedWhole = [
      async () => ({
        status: (
          await api(t.apiKey).request("POST", "/api/v1/events", { raw: `{"events":[${" ".repeat(MAX_BODY_BYTES)}]}` })
        ).status,
        what: "events over 1 MiB",
      }),
      async () => ({
        status: (
          await api(t.apiKey).request("POST", "/api/v1/events", {
            raw: `{"events":[{"attrs":${"[".repeat(200_000)}${"]".repeat(200_000)}}]}`,
          })
        ).status,
        what: "deep events",
      }),
    ];

    // For comparison, ordinary text of the same sizes: the bound is a generous second, or three times the longest
    // health answer seen then, when other work slows this machine down. The scans were quadratic: 4 s for 240 KB
    // of apikey=, a minute for 1 MB; an ordinary body of that size takes a fraction of a second.
    const plain = await underLoad(requests(UNITS.map(() => "The records service answered in time; nothing unusual. ")));
    const bound = Math.max(1_000, 3 * Math.max(...plain.health.map((h) => h.ms)));

    const heavy = [...requests(UNITS), ...refusedWhole];
    const { results, health } = await underLoad(heavy);

    expect(
      results.filter((r) => r.status >= 500 || r.status === 0),
      JSON.stringify(results),
    ).toEqual([]);
    expect(results).toHaveLength(heavy.length);
    expect(health.filter((h) => h.status !== 200)).toEqual([]);
    expect(
      health.filter((h) => h.ms > bound),
      `bound ${Math.round(bound)} ms: ${JSON.stringify(health.map((h) => Math.round(h.ms)))}`,
    ).toEqual([]);
  }, 300_000);
});
