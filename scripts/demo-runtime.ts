/**
 * The demo agent runtime: a separate process that runs the reference scenario (docs/concepts.md#reference-scenario) and
 * talks to Run Custody ONLY through the public HTTP API, with the reusable {@link CustodyClient}
 * (`lib/sdk/runtime-client.ts`). The agent loop is the real `@openai/agents` `run()` with a scripted `Model` (no
 * network) and three real tools: `read_document` (writes `case-918.pdf` into the sandbox workspace and hashes it),
 * `update_record` (HTTP PUT to the records service with an `Idempotency-Key`, guarded by the intent API) and
 * `write_report` (`report.md`, registered as an artifact by a checkpoint).
 *
 * Usage:
 *   CUSTODY_URL=http://localhost:3000 CUSTODY_API_KEY=… npx tsx scripts/demo-runtime.ts [--interrupt-at <point>] [--task-id <id>]
 * Options:
 *   --interrupt-at <point>  an interruption exercise: attempt 1 loses its sandbox at <point> (one of the crash
 *                           points below) instead of the scripted loss; the orchestrator reports the interruption
 *                           and attempt 2 waits for the gate like the story does. Same as DEMO_INTERRUPT_AT.
 *   --task-id <id>          the task id (same as DEMO_TASK_ID); give an exercise run its own, disposable one.
 * Env:
 *   CUSTODY_URL       Run Custody origin (default http://localhost:3000)
 *   CUSTODY_API_KEY   tenant runtime API key (required; never printed)
 *   DEMO_WORK_DIR     root of the sandboxes, snapshots and object store (default <CUSTODY_DATA_DIR|.data>/demo-work)
 *   RECORDS_URL       records service (scripts/records-service.ts); when unset one is started in-process on a
 *                     free port (RECORDS_PORT, if set) with its state in DEMO_WORK_DIR/records-service.json
 *   DEMO_TASK_ID      task id (default case-918)
 *   DEMO_CRASH_AT     crash point of attempt 1 (below); unset = the scripted sandbox loss
 *   DEMO_INTERRUPT_AT a point (below) where attempt 1 loses its sandbox (as --interrupt-at)
 *   DEMO_POLL_MS      resume-gate polling interval while the verdict is stop (default 2000)
 *   DEMO_PUBLISH      `1`: the approval story (README.md#the-demo-story). Attempt 1 asks for the approval of
 *                     publish_report once its draft is checkpointed (the demo orchestrator approves it under policy 1
 *                     and moves the policy to 2 while the sandbox is down: scripts/lib/demo-approval.ts); the last
 *                     attempt's agent calls publish_report, a tool with needsApproval: the run pauses, its RunState is
 *                     stored as a checkpoint artifact (sha256), and the report is published once a fresh approval lets
 *                     the intent go (lib/sdk/openai-agents.ts). `npm run demo` sets it (DEMO_PUBLISH=0 there leaves it
 *                     out).
 * Exit codes: 0 the task is done (also when it already was), 1 an error, 2 bad configuration,
 * 137 a DEMO_CRASH_AT crash, 130/143 stopped by SIGINT/SIGTERM (after reporting run.interrupted).
 *
 * The story. On start the runtime reads the task (`GET /api/v1/tasks/{id}`):
 * - 404 → attempt 1, then attempt 2 in the same process;
 * - phase `done` → prints that the scenario is complete and exits 0;
 * - otherwise (an earlier run stopped midway) → attempt `current_attempt + 1` with the attempt-2 logic.
 *
 * Attempt 1: task.created → sandbox.created (attempt 1, `sbx-…`) + manifest.applied → credential.issued and
 * credential.attached for the records host → read_document → snapshot + checkpoint v1 (`document_read`;
 * update_record declared `not_started` with its idempotency key) → update_record: intent (`go`) →
 * credential.used, the PUT, egress.allowed → the records service applies the update, but the receipt (and the
 * tool's completion) stay in the sandbox's buffer → checkpoint v2 (`record_updated`, effect `in_flight`) →
 * write_report writes the first half of report.md → snapshot + checkpoint v3 (`report_drafted`, artifact with
 * sha256) → the sandbox is lost: the orchestrator reports run.interrupted and sandbox.destroyed (reason `lost`);
 * the buffered receipt is never sent, so the server shows update_record as `unknown`.
 *
 * Attempt n ≥ 2: sandbox.created (attempt n, new id) → snapshot.restored (the last snapshot.saved digest on the
 * timeline, re-hashed on restore) → manifest.applied → a fresh credential.issued/attached → `POST …/resume`
 * with the current tool-definition digests, polled every DEMO_POLL_MS while the verdict is `stop` (each new set
 * of reasons is logged and recorded as an `x.resume_gate.verdict` event; a person reconciles in the browser).
 * A `replay` verdict is accepted only when update_record is already `completed` on the server (only a replay
 * is left) or its sole reason is `no_checkpoint`. On `resume`: run.resumed →
 * update_record with the SAME key: the intent answers `replay` with the stored receipt (no write) — or `go` if
 * the person recorded `not_applied`, and the write happens once with the same key → write_report appends the
 * second half (or writes both halves when the draft was not restored intact) → checkpoint `report_written` →
 * checkpoint `done` → run.stopped + sandbox.destroyed. The records service has applied the update once.
 *
 * Crash points (DEMO_CRASH_AT, attempt 1 only; the process calls `process.exit(137)` at once: queued events
 * are not sent, no run.interrupted is reported, the sandbox directory is left behind). With a crash point set
 * the runtime posts each receipt as soon as the write returns (no buffering), so the crash point alone decides
 * what the server knows. Expected state afterwards, and what the next start (without DEMO_CRASH_AT) meets:
 * - `after_intent`: intent answered `go`; no write made. The effect is `in_flight`, and `unknown` once the next
 *   attempt's sandbox.created arrives → gate `stop` (side_effect_unknown). The lookup endpoint answers
 *   `found: false` → a person records `not_applied` → the next intent is `go` → one write.
 * - `after_external_write`: the records service applied the update; no receipt. → `unknown` → gate `stop`;
 *   the lookup answers `found: true` → a person records `completed` → the next intent is `replay` → no write.
 * - `after_receipt`: the receipt IS posted before the crash (effect `completed`); checkpoint v2 not taken →
 *   gate `resume` → intent `replay` → no second write; the report is written in full.
 * - `during_report`: receipt posted, checkpoint v2 taken; report.md holds a torn first half that was never
 *   checkpointed → gate `resume` → replay; the restored snapshot has no draft, so both halves are rewritten.
 * - `after_checkpoint`: the draft is snapshotted and checkpointed (v3) → gate `resume` → replay; the restored
 *   draft matches the checkpointed artifact, so only the second half is appended.
 * In every case the record is updated exactly once and report.md ends with the same sha256.
 *
 * Event ids are `<task>:a<attempt>:<seq>` (deterministic within a run; a retried batch deduplicates). Logs are
 * one line per step, prefixed `[runtime]`; no secret is ever printed or sent in attrs.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { CRASH_POINTS, DemoRuntime, type CrashPoint } from "./demo-runtime/scenario";
import { isCrashPoint } from "@/lib/demo/interruption-points";
import { TASK_ID_PATTERN } from "@/lib/domain/events/schema";

function fail(message: string): never {
  console.error(`[runtime] ${message}`);
  process.exit(2);
}

/** `--interrupt-at <point>` and `--task-id <id>`; anything else is refused with the usage. */
function options(): { interruptAt?: string; taskId?: string } {
  try {
    const { values } = parseArgs({
      options: { "interrupt-at": { type: "string" }, "task-id": { type: "string" } },
      strict: true,
      allowPositionals: false,
    });
    return { interruptAt: values["interrupt-at"], taskId: values["task-id"] };
  } catch (err) {
    fail(
      `${err instanceof Error ? err.message : String(err)}. Usage: demo-runtime.ts [--interrupt-at <${CRASH_POINTS.join("|")}>] [--task-id <id>]`,
    );
  }
}

function config() {
  const apiKey = process.env.CUSTODY_API_KEY;
  if (!apiKey) fail("CUSTODY_API_KEY is required (a tenant runtime API key).");
  const opts = options();
  const crash = process.env.DEMO_CRASH_AT || undefined;
  if (crash && !(CRASH_POINTS as readonly string[]).includes(crash)) {
    fail(`DEMO_CRASH_AT must be one of ${CRASH_POINTS.join(", ")}; got "${crash}".`);
  }
  const interrupt = opts.interruptAt ?? (process.env.DEMO_INTERRUPT_AT || undefined);
  if (interrupt !== undefined && !isCrashPoint(interrupt)) {
    fail(`--interrupt-at (DEMO_INTERRUPT_AT) must be one of ${CRASH_POINTS.join(", ")}; got "${interrupt}".`);
  }
  if (interrupt && crash) fail("Set either DEMO_CRASH_AT (a hard crash) or --interrupt-at (a lost sandbox), not both.");
  const taskId = opts.taskId ?? (process.env.DEMO_TASK_ID || "case-918");
  if (!TASK_ID_PATTERN.test(taskId))
    fail(`--task-id must be 1–200 letters, digits, '.', '_', ':' or '-'; got "${taskId.slice(0, 40)}".`);
  const pollMs = Number(process.env.DEMO_POLL_MS || 2000);
  if (!Number.isFinite(pollMs) || pollMs < 50) fail("DEMO_POLL_MS must be a number of milliseconds ≥ 50.");
  return {
    custodyUrl: process.env.CUSTODY_URL || "http://localhost:3000",
    apiKey,
    workDir: path.resolve(process.env.DEMO_WORK_DIR || path.join(process.env.CUSTODY_DATA_DIR || ".data", "demo-work")),
    recordsUrl: process.env.RECORDS_URL || undefined,
    recordsPort: process.env.RECORDS_PORT ? Number(process.env.RECORDS_PORT) : undefined,
    taskId,
    crashAt: crash as CrashPoint | undefined,
    interruptAt: interrupt as CrashPoint | undefined,
    pollMs,
    publish: process.env.DEMO_PUBLISH === "1",
  };
}

async function main() {
  const runtime = new DemoRuntime(config());
  // `on`, not `once`: the Agents SDK's own signal listener exits the process by itself when it sees no other
  // listener left, which would cut the interruption report short.
  let stopping = false;
  const stop = (signal: NodeJS.Signals, code: number) => {
    if (stopping) return;
    stopping = true;
    runtime.interrupt(signal).finally(() => process.exit(code));
  };
  process.on("SIGINT", () => stop("SIGINT", 130));
  process.on("SIGTERM", () => stop("SIGTERM", 143));
  process.exit(await runtime.main());
}

main().catch((err: unknown) => {
  console.error(`[runtime] failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
