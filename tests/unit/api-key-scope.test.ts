/**
 * The scope rules of runtime API keys (lib/domain/tenancy/api-key-scope.ts, decision 0044): which method and path each
 * scope admits, and what it answers otherwise. The HTTP behaviour is in tests/integration/api-key-scopes.test.ts.
 */
import { describe, expect, it } from "vitest";
import { outsidePrefix, scopeRefusal, taskIdInPath } from "@/lib/domain/tenancy/api-key-scope";

const code = (e: ReturnType<typeof scopeRefusal>) => e?.code ?? null;

describe("API key scopes", () => {
  it("full (and no scope) admits everything", () => {
    expect(scopeRefusal(undefined, "DELETE", "/api/v1/anything")).toBeNull();
    expect(scopeRefusal({ kind: "full" }, "POST", "/api/v1/events")).toBeNull();
  });

  it("read_only admits GET and HEAD only", () => {
    const s = { kind: "read_only" } as const;
    expect(scopeRefusal(s, "GET", "/api/v1/tasks")).toBeNull();
    expect(scopeRefusal(s, "HEAD", "/api/v1/tasks")).toBeNull();
    for (const m of ["POST", "PUT", "PATCH", "DELETE"])
      expect(code(scopeRefusal(s, m, "/api/v1/tasks/x"))).toBe("scope_read_only");
  });

  it("runtime admits the protocol's routes and nothing else", () => {
    const s = { kind: "runtime" } as const;
    for (const [m, p] of [
      ["POST", "/api/v1/events"],
      ["PUT", "/api/v1/tasks/t-1"],
      ["GET", "/api/v1/tasks/t-1"],
      ["POST", "/api/v1/tasks/t-1/resume"],
      ["POST", "/api/v1/tasks/t-1/side-effects/send_email/intent"],
      ["POST", "/api/v1/tasks/t-1/side-effects/send_email/receipt"],
      ["POST", "/api/v1/import/openai-agents/run-state"],
      ["POST", "/api/v1/traces/ingest"],
      ["GET", "/api/v1/approvals/a-1"],
    ] as const) {
      expect(scopeRefusal(s, m, p), `${m} ${p}`).toBeNull();
    }
    for (const [m, p] of [
      ["GET", "/api/v1/tasks"],
      ["GET", "/api/v1/approvals"],
      ["GET", "/api/v1/tasks/t-1/export"],
      ["GET", "/api/v1/tasks/t-1/timeline"],
      ["DELETE", "/api/v1/tasks/t-1"],
      ["POST", "/api/v1/tasks/t-1/side-effects/x/reconcile"],
    ] as const) {
      expect(code(scopeRefusal(s, m, p)), `${m} ${p}`).toBe("scope_runtime_only");
    }
  });

  it("task_prefix: inside the prefix passes, outside is not_found, routes about no task are refused", () => {
    const s = { kind: "task_prefix", prefix: "billing-" } as const;
    expect(scopeRefusal(s, "GET", "/api/v1/tasks/billing-7/timeline")).toBeNull();
    expect(scopeRefusal(s, "POST", "/api/v1/events")).toBeNull();
    expect(code(scopeRefusal(s, "GET", "/api/v1/tasks/other-7"))).toBe("not_found");
    expect(code(scopeRefusal(s, "GET", "/api/v1/tasks/billin"))).toBe("not_found");
    expect(code(scopeRefusal(s, "GET", "/api/v1/tasks"))).toBe("scope_task_prefix");
    expect(scopeRefusal(s, "GET", "/api/v1/tasks")?.details).toEqual({ scope: "task_prefix", task_prefix: "billing-" });
    // The id is compared decoded: an encoded prefix character does not slip past.
    expect(scopeRefusal(s, "GET", "/api/v1/tasks/billing%2D7")).toBeNull();
    expect(taskIdInPath("/api/v1/tasks/a%2Fb/resume")).toBe("a/b");
    expect(outsidePrefix(s, "billing-1")).toBe(false);
    expect(outsidePrefix({ kind: "runtime" }, "anything")).toBe(false);
  });
});
