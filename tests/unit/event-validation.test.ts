/**
 * validateEvent and the batch envelope: every rejection code, sender extensions (`x.` types), and the
 * attributes side-effect events must carry.
 */
import { describe, expect, it } from "vitest";
import { PLANES } from "@/db/schema/enums";
import { EVENT_CATALOGUE, RUNTIME_EVENT_TYPES, type EventType } from "@/lib/domain/events/catalogue";
import { DomainError } from "@/lib/domain/errors";
import { MAX_EVENTS_PER_BATCH, prepareBatch } from "@/lib/domain/events/ingest";
import { fastValidEvent, isKnownType, MAX_ATTRS_BYTES, validateEvent } from "@/lib/domain/events/schema";

const base = {
  id: "ev-1",
  task_id: "case-918",
  plane: "session",
  type: "phase.changed",
  occurred_at: "2025-01-01T12:00:00Z",
};

function rejected(raw: unknown) {
  const v = validateEvent(raw);
  if (v.ok) throw new Error(`expected a rejection, got ${JSON.stringify(v.event)}`);
  return v;
}

describe("validateEvent", () => {
  it("accepts a minimal event and every optional field", () => {
    expect(validateEvent(base)).toEqual({ ok: true, event: base });
    const full = {
      ...base,
      plane: "environment",
      type: "sandbox.created",
      occurred_at: "2025-01-01T14:00:00.123456+02:00",
      environment_id: "sbx-7",
      attempt: 2,
      actor: "runtime",
      attrs: { image: "python:3.12", nested: { a: [1, 2] } },
    };
    expect(validateEvent(full)).toEqual({ ok: true, event: full });
  });

  it("accepts every listed type in its own plane and rejects it in the others", () => {
    for (const plane of PLANES) {
      for (const type of RUNTIME_EVENT_TYPES[plane]) {
        expect(
          validateEvent({
            ...base,
            plane,
            type,
            attempt: 1,
            attrs: { name: "n", idempotency_key: "key-12345678", external_operation_id: "op" },
          }).ok,
          `${plane}/${type}`,
        ).toBe(true);
        for (const other of PLANES.filter((p) => p !== plane)) {
          expect(rejected({ ...base, plane: other, type }).error.code, `${other}/${type}`).toBe("unknown_type");
        }
      }
    }
  });

  it("lists every type of the catalogue a runtime may report under its plane, and refuses the server's own", () => {
    const types = Object.keys(EVENT_CATALOGUE) as EventType[];
    expect(PLANES.flatMap((p) => RUNTIME_EVENT_TYPES[p]).sort()).toEqual(
      types.filter((t) => EVENT_CATALOGUE[t].runtimeMayReport).sort(),
    );
    const serverOnly = types.filter((t) => !EVENT_CATALOGUE[t].runtimeMayReport);
    expect(serverOnly).toContain("credential.revocation_checked");
    for (const type of serverOnly) {
      for (const plane of PLANES) {
        expect(rejected({ ...base, plane, type, attempt: 1 }).error.code, `${plane}/${type}`).toBe("unknown_type");
      }
    }
  });

  it("refuses an event of a type that must name its attempt when it names none", () => {
    const types = Object.keys(EVENT_CATALOGUE) as EventType[];
    const attrs = { name: "n", idempotency_key: "key-12345678", external_operation_id: "op" };
    for (const type of types.filter((t) => EVENT_CATALOGUE[t].runtimeMayReport)) {
      const { plane, attemptRequired } = EVENT_CATALOGUE[type];
      const v = validateEvent({ ...base, plane, type, attrs });
      expect(v.ok, type).toBe(!attemptRequired);
      if (!v.ok) expect(v.error.message, type).toMatch(/^attempt: /);
    }
  });

  it("accepts x.-prefixed types in every plane", () => {
    for (const plane of PLANES) {
      expect(validateEvent({ ...base, plane, type: "x.acme.heartbeat" }).ok, plane).toBe(true);
      expect(isKnownType(plane, "x.retry_2")).toBe(true);
    }
  });

  it.each([
    ["an unknown type", { type: "phase.exploded" }, "unknown_type", "phase.exploded"],
    ["a type of another plane", { type: "tool.called" }, "unknown_type", "tool.called"],
    ["a bare x. prefix", { type: "x." }, "unknown_type", "x."],
    ["an x prefix without the dot", { type: "xacme" }, "unknown_type", "xacme"],
    ["an unknown plane", { plane: "network" }, "invalid_event", "plane"],
    ["a missing plane", { plane: undefined }, "invalid_event", "plane"],
    ["a missing id", { id: undefined }, "invalid_event", "id"],
    ["an empty id", { id: "" }, "invalid_event", "id"],
    ["a numeric id", { id: 42 }, "invalid_event", "id"],
    ["a task id with a slash", { task_id: "a/b" }, "invalid_event", "task_id"],
    ["a task id with a space", { task_id: "case 918" }, "invalid_event", "task_id"],
    ["a missing task id", { task_id: undefined }, "invalid_event", "task_id"],
    ["an occurred_at that is not a time", { occurred_at: "yesterday" }, "invalid_event", "occurred_at"],
    ["an occurred_at without a zone", { occurred_at: "2025-01-01T12:00:00" }, "invalid_event", "occurred_at"],
    ["an occurred_at as epoch number", { occurred_at: 1735732800000 }, "invalid_event", "occurred_at"],
    ["attempt 0", { attempt: 0 }, "invalid_event", "attempt"],
    ["a fractional attempt", { attempt: 1.5 }, "invalid_event", "attempt"],
    ["attrs as an array", { attrs: [1, 2] }, "invalid_event", "attrs"],
    ["attrs as a string", { attrs: "x" }, "invalid_event", "attrs"],
    ["an unknown top-level field", { sandbox_handle: "docker://x" }, "invalid_event", "sandbox_handle"],
    ["attrs over the size limit", { attrs: { blob: "x".repeat(MAX_ATTRS_BYTES) } }, "attrs_too_large", "attrs"],
  ])("rejects %s", (_name, change, code, mention) => {
    const raw: Record<string, unknown> = { ...base, ...change };
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete raw[k];
    const v = rejected(raw);
    expect(v.error.code).toBe(code);
    expect(v.error.message).toContain(mention);
    expect(v.id).toBe(typeof raw.id === "string" ? raw.id : "");
  });

  it.each([null, "event", 42, [base]])("rejects a non-object event %j without an id", (raw) => {
    const v = rejected(raw);
    expect(v).toMatchObject({ ok: false, id: "", error: { code: "invalid_event" } });
  });

  describe("side_effect.* attributes", () => {
    const tools = { ...base, plane: "tools", attempt: 1 };

    it.each(["side_effect.intent", "side_effect.receipt"])("%s needs name and idempotency_key", (type) => {
      const operation = type === "side_effect.receipt" ? { external_operation_id: "op-1" } : {};
      expect(
        validateEvent({
          ...tools,
          type,
          attrs: { name: "update_record", idempotency_key: "rec-918-key", ...operation },
        }).ok,
      ).toBe(true);

      const noAttrs = rejected({ ...tools, type });
      expect(noAttrs.error.code).toBe("invalid_event");
      expect(noAttrs.error.message).toMatch(/attrs\.(name|idempotency_key)/);

      const noKey = rejected({ ...tools, type, attrs: { name: "update_record" } });
      expect(noKey.error).toMatchObject({ code: "invalid_event" });
      expect(noKey.error.message).toContain("attrs.idempotency_key");

      const noName = rejected({ ...tools, type, attrs: { idempotency_key: "rec-918-key" } });
      expect(noName.error.message).toContain("attrs.name");

      const emptyKey = rejected({ ...tools, type, attrs: { name: "update_record", idempotency_key: "" } });
      expect(emptyKey.error.message).toContain("attrs.idempotency_key");

      const numericKey = rejected({ ...tools, type, attrs: { name: "update_record", idempotency_key: 918 } });
      expect(numericKey.error.message).toContain("attrs.idempotency_key");
    });

    it.each(["side_effect.intent", "side_effect.receipt"])("%s names its attempt (fencing needs it)", (type) => {
      const { attempt: _a, ...noAttempt } = tools;
      const attrs = { name: "update_record", idempotency_key: "rec-918-key", external_operation_id: "op-1" };
      const v = rejected({ ...noAttempt, type, attrs });
      expect(v.error.message).toContain("attempt");
      expect(fastValidEvent({ ...noAttempt, type, attrs })).toBeNull();
    });

    // The same name, key and typed-text rules as the intent route: a name or key it refuses could never be reconciled.
    it.each([
      ["a name with a space", { name: "has space" }, "attrs.name"],
      ["a name with a slash", { name: "send/email" }, "attrs.name"],
      ["a name with a right-to-left override", { name: "pay\u202Emoc.exe" }, "attrs.name"],
      ["a name of 150 characters", { name: "n".repeat(150) }, "attrs.name"],
      ["a key with a space", { idempotency_key: "has space 123" }, "attrs.idempotency_key"],
      ["a key of 7 characters", { idempotency_key: "short-7" }, "attrs.idempotency_key"],
      ["a key with a right-to-left override", { idempotency_key: "key\u202E12345678" }, "attrs.idempotency_key"],
      ["an action with a control character", { action: "records\u0007update" }, "attrs.action"],
      ["a tool with a bidi isolate", { tool: "update\u2066record" }, "attrs.tool"],
    ])("refuses an intent event with %s, as the intent route would", (_what, change, mention) => {
      const event = {
        ...tools,
        type: "side_effect.intent",
        attrs: { name: "update_record", idempotency_key: "rec-918-key", ...change },
      };
      expect(rejected(event).error.message).toContain(mention);
      expect(fastValidEvent(event)).toBeNull();
    });

    it("checks the optional receipt fields' types and keeps extra attributes", () => {
      const ok = validateEvent({
        ...tools,
        type: "side_effect.receipt",
        attrs: {
          name: "update_record",
          idempotency_key: "rec-918-key",
          external_operation_id: "op-1",
          completed_at: "2025-01-01T12:00:01Z",
          http_status: 200,
        },
      });
      expect(ok.ok).toBe(true);
      const bad = rejected({
        ...tools,
        type: "side_effect.receipt",
        attrs: {
          name: "update_record",
          idempotency_key: "rec-918-key",
          external_operation_id: "op-1",
          completed_at: "soon",
        },
      });
      expect(bad.error.message).toContain("attrs.completed_at");
    });

    it("a receipt event must name the external operation (no receipt is made up); an intent need not", () => {
      const attrs = { name: "update_record", idempotency_key: "rec-918-key" };
      const receipt = { ...tools, type: "side_effect.receipt", attrs };
      expect(rejected(receipt).error.message).toContain("attrs.external_operation_id");
      expect(fastValidEvent(receipt)).toBeNull();
      expect(rejected({ ...receipt, attrs: { ...attrs, external_operation_id: "" } }).error.message).toContain(
        "external_operation_id",
      );
      expect(validateEvent({ ...tools, type: "side_effect.intent", attrs }).ok).toBe(true);
    });

    it("other tool events need no side-effect attributes", () => {
      expect(validateEvent({ ...tools, type: "tool.called" }).ok).toBe(true);
    });
  });
});

describe("prepareBatch", () => {
  it("keeps input order, rejects bad events, and tells a repeated id with the same content from one with other content", () => {
    const good = { ...base, id: "a", attrs: { from: "x", to: "y" } };
    const { prepared, results } = prepareBatch({
      events: [
        good,
        { ...base, id: "b", plane: "nope" },
        { ...good, attrs: { to: "y", from: "x" } },
        { ...good, attrs: { changed: 1 } },
        { ...good, occurred_at: "2025-01-01T13:00:00+01:00" },
        { ...base, id: "c", type: "x.ping" },
      ],
    });
    expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
      ["a", "stored", undefined],
      ["b", "rejected", "invalid_event"],
      ["a", "duplicate", undefined],
      ["a", "conflict", "event_id_conflict"],
      ["a", "duplicate", undefined],
      ["c", "stored", undefined],
    ]);
    expect(results[3]!.stored_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(prepared.map((p) => p.id)).toEqual(["a", "c"]);
  });

  it("redacts attrs and counts the redactions", () => {
    const { prepared } = prepareBatch({
      events: [{ ...base, attrs: { password: "hunter2", note: `key sk-${"z".repeat(24)}`, count: 1 } }],
    });
    expect(prepared[0]).toMatchObject({
      attrs: { password: "[REDACTED]", note: "key [REDACTED]", count: 1 },
      redaction_count: 2,
    });
  });

  it.each([
    ["not an object", "events"],
    ["an object without events", { items: [] }],
    ["events that are not an array", { events: { id: "a" } }],
    ["null", null],
  ])("refuses an envelope that is %s", (_name, body) => {
    expect(() => prepareBatch(body)).toThrow(DomainError);
    try {
      prepareBatch(body);
    } catch (err) {
      expect((err as DomainError).code).toBe("validation_failed");
    }
  });

  it(`refuses more than ${MAX_EVENTS_PER_BATCH} events and accepts exactly ${MAX_EVENTS_PER_BATCH}`, () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ ...base, id: `e${i}` }));
    expect(prepareBatch({ events: many(MAX_EVENTS_PER_BATCH) }).prepared).toHaveLength(MAX_EVENTS_PER_BATCH);
    let caught: unknown;
    try {
      prepareBatch({ events: many(MAX_EVENTS_PER_BATCH + 1) });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DomainError);
    expect((caught as DomainError).code).toBe("too_many_events");
    expect((caught as DomainError).status).toBeGreaterThanOrEqual(400);
    expect((caught as DomainError).status).toBeLessThan(500);
  });
});

describe("fastValidEvent (the ingest hot path) never accepts what the zod schema rejects", () => {
  const base = {
    id: "e-1",
    task_id: "task-1",
    plane: "tools",
    type: "side_effect.intent",
    occurred_at: "2026-11-29T10:00:00.000Z",
    environment_id: "sbx-1",
    attempt: 2,
    actor: "agent",
    attrs: { name: "update_record", idempotency_key: "k-12345678" },
  } as Record<string, unknown>;
  // The mutations below include the attempt a side-effect event must name and the name and key rules.
  const mutations: Array<[string, unknown]> = [
    ["id", ""],
    ["id", 5],
    ["id", "x".repeat(201)],
    ["task_id", "has space"],
    ["task_id", "/slash"],
    ["plane", "network"],
    ["type", "tool.called"],
    ["type", "bogus"],
    ["type", "x.custom"],
    ["occurred_at", "2026-02-30T10:00:00Z"],
    ["occurred_at", "2026-11-29 10:00:00"],
    ["occurred_at", "2026-11-29T10:00:00"],
    ["occurred_at", 1700000000],
    ["environment_id", ""],
    ["environment_id", null],
    ["attempt", 0],
    ["attempt", 1.5],
    ["attempt", "2"],
    ["attempt", null],
    ["actor", ""],
    ["attrs", []],
    ["attrs", null],
    ["attrs", "text"],
    ["attrs", {}],
    ["attrs", { name: "n" }],
    ["attrs", { idempotency_key: "k" }],
    ["extra_field", 1],
    ["plane", "session"],
    ["attempt", undefined],
    ["attrs", { name: "has space", idempotency_key: "k-12345678" }],
    ["attrs", { name: "update_record", idempotency_key: "k" }],
    ["attrs", { name: "update_record", idempotency_key: "k-12345678", tool: " padded" }],
  ];
  it.each(mutations)("with %s = %j", (key, value) => {
    const candidate = { ...base, [key]: value };
    const fast = fastValidEvent(candidate);
    const slow = validateEvent(candidate);
    // Safety: the fast path may send a valid event on to zod, but must never pass an invalid one.
    expect({ fastAccepts: fast !== null, zodAccepts: slow.ok }).not.toEqual({ fastAccepts: true, zodAccepts: false });
    if (!slow.ok) expect(fast).toBeNull();
  });
  it("accepts the well-formed event without zod and returns the same fields", () => {
    expect(fastValidEvent(base)).toEqual(base);
    expect(validateEvent(base).ok).toBe(true);
  });
  it("rejects non-objects", () => {
    for (const v of [null, 1, "e", [base]]) expect(fastValidEvent(v)).toBeNull();
  });
});
