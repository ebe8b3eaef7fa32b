/**
 * The demo's custody map for the document-processing workflow, made through the public HTTP API as the owner
 * (`owner@demo.test`, signed in through next-auth like a browser): some rows filled, one interruption exercise
 * linked to the demo task and completed, and some layers still `unknown`. Version 1 is published before the
 * exercise, so the exercise's results start draft v2 and the two versions can be compared.
 *
 * Runs once per data directory: when the workspace already has a map for the workflow it does nothing. Waits until
 * the demo task has lost its first sandbox (so its checkpoints, the draft report and the unknown write exist).
 */
import type { ExerciseJson, LayerRow, MapLayer, MapListItem, MapView } from "@/lib/contract/maps";
import type { ArtifactView, TaskView } from "@/lib/contract/api";

export const DEMO_WORKFLOW = "document-processing";
export const DEMO_MAP_TITLE = "Case files to reports";

type Log = (line: string) => void;
type Session = { cookie: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Signs in with next-auth's credentials flow (csrf, then the form post) and returns the session cookie. */
export async function signInOverHttp(baseUrl: string, email: string, password: string): Promise<Session> {
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  };
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`, { redirect: "manual" });
  keep(csrf);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookie() },
    body: new URLSearchParams({ csrfToken, email, password, json: "true", callbackUrl: `${baseUrl}/maps` }).toString(),
  });
  keep(res);
  if (![...jar.keys()].some((k) => k.endsWith("next-auth.session-token")))
    throw new Error(`signing in as ${email} was refused (${res.status})`);
  return { cookie: cookie() };
}

async function call<T>(
  baseUrl: string,
  auth: Session | { apiKey: string },
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

async function ok<T>(p: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const res = await p;
  if (res.status !== 200) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body;
}

/** What the demo fills per row (the rest keeps the worksheet text and stays undecided). */
function rows(taskId: string): Partial<Record<MapLayer, Partial<Omit<LayerRow, "layer" | "revision">>>> {
  return {
    session_state: {
      custodians: [{ name: "Agent platform team", organization: "Acme Docs" }],
      verification: "verified",
      verification_evidence: {
        kind: "task",
        ref: taskId,
        note: "Signed checkpoints of the run are kept and verify after its sandbox was lost.",
      },
      decision: "accept",
    },
    tools: {
      custodians: [
        { name: "Records API owners", organization: "Acme Records" },
        { name: "Agent platform team", organization: "Acme Docs" },
      ],
      handoff:
        "Acme Records answers lookups by idempotency key; the Acme Docs responder reads that answer before settling a write whose outcome is unknown, and never retries blind.",
      decision: "accept",
      decision_note: "Writes carry idempotency keys and the records service honours them.",
    },
    compute: {
      custodians: [
        { name: "Sandbox operations", organization: "VendorCo" },
        { name: "Agent platform team", organization: "Acme Docs" },
      ],
      handoff:
        "VendorCo replaces a lost sandbox and reports it as a new attempt; Acme Docs restores the last snapshot and checks its digest before resuming.",
      decision: "request_evidence",
      decision_note: "Which workspace paths survive a sandbox replacement — from Sandbox operations (VendorCo)",
    },
    credentials: {
      custodians: [{ name: "Identity team", organization: "Acme Docs" }],
      decision: "constrain",
      decision_note: "Lower permissions: records:write on test records only, until revocation is exercised.",
    },
    artifacts: {
      custodians: [{ name: "Document storage", organization: "Acme Docs" }],
    },
    recovery: {
      custodians: [{ name: "Workflow owner (Olive)", organization: "Acme Docs" }],
      decision: "accept",
    },
  };
}

/**
 * Creates the demo map unless the workspace already has one for the workflow.
 * @param opts.apiKey the runtime key (to wait for the demo task); `email`/`password` the owner's login.
 */
export async function seedDemoMap(opts: {
  baseUrl: string;
  apiKey: string;
  email: string;
  password: string;
  taskId: string;
  log: Log;
  timeoutMs?: number;
}): Promise<void> {
  const { baseUrl, taskId, log } = opts;
  const owner = await signInOverHttp(baseUrl, opts.email, opts.password);
  const existing = await ok(
    call<{ maps: MapListItem[] }>(baseUrl, owner, "GET", `/api/v1/maps?q=${encodeURIComponent(DEMO_WORKFLOW)}`),
    "listing maps",
  );
  if (existing.maps.some((m) => m.workflow === DEMO_WORKFLOW)) return;

  // The exercise links the demo task: wait until it has lost its first sandbox (or finished, on an old data dir).
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  let task: TaskView | null = null;
  for (;;) {
    const res = await call<TaskView>(
      baseUrl,
      { apiKey: opts.apiKey },
      "GET",
      `/api/v1/tasks/${encodeURIComponent(taskId)}`,
    );
    if (res.status === 200 && (res.body.current_attempt >= 2 || res.body.phase === "done")) {
      task = res.body;
      break;
    }
    if (Date.now() > deadline)
      throw new Error(`task ${taskId} did not reach its second attempt in time; the map is not seeded`);
    await sleep(1000);
  }
  const artifacts = await ok(
    call<{ artifacts: ArtifactView[] }>(
      baseUrl,
      { apiKey: opts.apiKey },
      "GET",
      `/api/v1/tasks/${encodeURIComponent(taskId)}/artifacts`,
    ),
    "artifacts",
  );
  const draft = artifacts.artifacts.find((a) => a.ref.endsWith("report.md"));

  let map = await ok(
    call<MapView>(baseUrl, owner, "POST", "/api/v1/maps", { workflow: DEMO_WORKFLOW, title: DEMO_MAP_TITLE }),
    "creating the map",
  );
  for (const [layer, fields] of Object.entries(rows(taskId)) as Array<[MapLayer, Record<string, unknown>]>) {
    const row = map.layers.find((l) => l.layer === layer)!;
    await ok(
      call(baseUrl, owner, "PATCH", `/api/v1/maps/${map.id}/layers/${layer}`, { ...fields, revision: row.revision }),
      `filling ${layer}`,
    );
  }
  await ok(call(baseUrl, owner, "POST", `/api/v1/maps/${map.id}/publish`, {}), "publishing v1");

  const ex = await ok(
    call<ExerciseJson>(baseUrl, owner, "POST", `/api/v1/maps/${map.id}/exercises`, {
      interruption_point: "after_external_write",
      layers: ["tools", "artifacts", "recovery"],
    }),
    "starting the exercise",
  );
  const steps = [
    {
      status: "passed",
      note: `Expected: record ${task.task_id} updated exactly once; report.md complete.`,
      task_id: null,
    },
    {
      status: "passed",
      note: `Checkpoints up to the drafted report are signed and kept (${task.version} so far).`,
      task_id: taskId,
    },
    {
      status: "passed",
      note: "The sandbox was lost after the records service applied the update and before its receipt was reported.",
      task_id: taskId,
    },
    {
      status: "passed",
      note: "The resume gate answered stop (side_effect_unknown) instead of retrying; the write waits for a person to reconcile it.",
      task_id: taskId,
    },
    {
      status: "passed",
      note: "The half-written report.md is listed with its sha256 and survives the lost sandbox.",
      task_id: taskId,
      artifact_digest: draft?.sha256 ?? null,
    },
    {
      status: "blocked",
      note: "Not exercised: the demo runtime has no revocation step. Test it with your own runtime and scoped test access.",
      task_id: null,
    },
  ].map((s, i) => ({ step: ex.steps[i]!.step, artifact_digest: null, ...s }));
  const saved = await ok(
    call<ExerciseJson>(baseUrl, owner, "PATCH", `/api/v1/maps/${map.id}/exercises/${ex.id}`, {
      steps,
      revision: ex.revision,
    }),
    "recording the steps",
  );
  await ok(
    call(baseUrl, owner, "POST", `/api/v1/maps/${map.id}/exercises/${ex.id}/complete`, {
      outcome: "visible_stop",
      finding:
        "Losing the sandbox after the external write left the update unknown; the product showed it, kept the draft with its digest, and stopped the resume until a person settled it. No second write was attempted.",
      revision: saved.revision,
    }),
    "completing the exercise",
  );
  map = await ok(call<MapView>(baseUrl, owner, "GET", `/api/v1/maps/${map.id}`), "reading the map");
  const unknown = map.layers.filter((l) => l.verification === "unknown").map((l) => l.layer);
  log(
    `custody map "${DEMO_MAP_TITLE}" seeded (v1 published, draft v${map.version}); still unknown: ${unknown.join(", ")}`,
  );
}
