/**
 * The demo's approval story, played by the orchestrator (`npm run demo`) through the public API as people:
 * 1. waits for the run to ask for the approval of publish_report (attempt 1 asks once its draft is checkpointed);
 * 2. the approver approves it under policy version 1 (the seeded approval);
 * 3. once attempt 1's sandbox is lost, the owner activates policy version 2 while the sandbox is down: the approval
 *    turns stale (`policy_changed`), and the approvals page shows the old and new values side by side.
 * Then it is the person's turn: the responder reconciles update_record, the approver re-approves in the browser, and the
 * runtime resumes and publishes once. Skipped unless the tenant's current policy version is 1 (scripts/lib/demo-policies.ts
 * stores versions 1 and 2 and activates 1).
 */
import { signInOverHttp } from "./demo-map";

type Log = (line: string) => void;

/** The policy version the demo approves under, and the one it moves to while the sandbox is down. */
export const DEMO_POLICY_BEFORE = "1";
export const DEMO_POLICY_AFTER = "2";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call<T>(
  baseUrl: string,
  auth: { cookie: string } | { apiKey: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> =
    "cookie" in auth ? { cookie: auth.cookie } : { authorization: `Bearer ${auth.apiKey}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

type ApprovalItem = { id: string; side_effect: string; status: string; policy_version: string };

/**
 * Plays steps 1–3 for `taskId`.
 * @param opts.approverEmail / ownerEmail the demo people who decide and who change the policy.
 * @returns the seeded approval's id, or null when skipped.
 * @throws Error when a step is refused or does not happen within `timeoutMs`.
 */
export async function seedDemoApproval(opts: {
  baseUrl: string;
  apiKey: string;
  password: string;
  taskId: string;
  log: Log;
  approverEmail?: string;
  ownerEmail?: string;
  pollMs?: number;
  timeoutMs?: number;
}): Promise<string | null> {
  const { baseUrl, taskId, log } = opts;
  const runtime = { apiKey: opts.apiKey };
  const pollMs = opts.pollMs ?? 1000;
  const deadline = Date.now() + (opts.timeoutMs ?? 10 * 60_000);
  const policy = await call<{ version?: number }>(baseUrl, runtime, "GET", "/api/v1/policies/current");
  if (policy.status !== 200) throw new Error(`reading the policy version answered ${policy.status}`);
  const current = policy.body.version === undefined ? "none" : String(policy.body.version);
  if (current !== DEMO_POLICY_BEFORE) {
    log(`approval story: the current policy version is ${current}, not ${DEMO_POLICY_BEFORE}; nothing to seed`);
    return null;
  }
  const approver = await signInOverHttp(baseUrl, opts.approverEmail ?? "approver@demo.test", opts.password);

  let request: ApprovalItem | undefined;
  while (!request) {
    if (Date.now() > deadline) throw new Error("the run did not ask for the approval of publish_report in time");
    const list = await call<{ approvals: ApprovalItem[] }>(
      baseUrl,
      approver,
      "GET",
      `/api/v1/approvals?task_id=${encodeURIComponent(taskId)}&status=pending`,
    );
    request = list.status === 200 ? list.body.approvals.find((a) => a.side_effect === "publish_report") : undefined;
    if (!request) await sleep(pollMs);
  }
  const decided = await call(baseUrl, approver, "POST", `/api/v1/approvals/${request.id}/decision`, {
    decision: "approve",
    reason: `Seeded by the demo: publishing the report of ${taskId} is fine under policy version ${DEMO_POLICY_BEFORE}.`,
  });
  if (decided.status !== 200)
    throw new Error(
      `approving ${request.id} answered ${decided.status}: ${JSON.stringify(decided.body).slice(0, 200)}`,
    );
  log(
    `approval story: ${opts.approverEmail ?? "approver@demo.test"} approved publish_report (approval ${request.id}) under policy version ${DEMO_POLICY_BEFORE}`,
  );

  // While the sandbox is down: after attempt 1 reported it lost.
  for (;;) {
    if (Date.now() > deadline) throw new Error("attempt 1 did not lose its sandbox in time");
    const page = await call<{
      events: Array<{ type: string; attrs: Record<string, unknown> }>;
      next_cursor: string | null;
    }>(baseUrl, runtime, "GET", `/api/v1/tasks/${encodeURIComponent(taskId)}/timeline?limit=1000`);
    if (
      page.status === 200 &&
      page.body.events.some((e) => e.type === "sandbox.destroyed" && e.attrs.reason === "lost")
    )
      break;
    await sleep(pollMs);
  }
  const owner = await signInOverHttp(baseUrl, opts.ownerEmail ?? "owner@demo.test", opts.password);
  const moved = await call(baseUrl, owner, "POST", `/api/v1/policies/${DEMO_POLICY_AFTER}/activate`);
  if (moved.status !== 200)
    throw new Error(
      `changing the policy version answered ${moved.status}: ${JSON.stringify(moved.body).slice(0, 200)}`,
    );
  log(
    `approval story: the policy moved to version ${DEMO_POLICY_AFTER} while the sandbox was down; approval ${request.id} is stale (policy_changed). ` +
      `Re-approve it in the browser as ${opts.approverEmail ?? "approver@demo.test"} (Approvals → the request).`,
  );
  return request.id;
}
