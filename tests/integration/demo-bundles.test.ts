/**
 * The demo's bundles verify offline (decisions 0037, 0038): the reference scenario seeded as `npm run demo` seeds it
 * (scripts/demo.ts: the records lookup, the policy versions, the real demo runtime running the task until it has lost
 * its first sandbox, the custody map with its exercise), then the task's bundle and the workspace bundle are
 * downloaded from the real server and checked by the command line a reader would use, `npx run-custody verify`
 * (bin/run-custody.mjs), which must exit 0 with every check passed.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { seedDemoMap } from "@/scripts/lib/demo-map";
import { seedDemoPolicies } from "@/scripts/lib/demo-policies";
import { seedDemoSettings } from "@/scripts/lib/demo-settings";
import { RuntimeProcess } from "../support/runtime-process";
import { startTempRecords } from "./support/local-servers";
import { signInAs } from "./support/people";
import { baseUrl, createTestTenant, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => {});
});

/** Downloads `url` as the signed-in person into `file`. */
async function save(url: string, cookie: string, file: string): Promise<void> {
  const res = await fetch(url, { headers: { cookie } });
  expect(res.status, url).toBe(200);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
}

/** `npx run-custody verify <file> --json`, as a reader runs it. */
function runVerify(file: string): { status: number | null; report: { ok: boolean; checks: unknown[] }; out: string } {
  const res = spawnSync(
    process.execPath,
    [path.join(process.cwd(), "bin", "run-custody.mjs"), "verify", file, "--json"],
    {
      encoding: "utf8",
      timeout: 120_000,
    },
  );
  const out = `${res.stdout}\n${res.stderr}`;
  return { status: res.status, report: JSON.parse(res.stdout) as { ok: boolean; checks: unknown[] }, out };
}

it("the demo scenario's task bundle and workspace bundle pass `npx run-custody verify`", async () => {
  const t = await createTestTenant(handle.db);
  const owner = await signInAs(t, "owner");
  const records = await startTempRecords();
  cleanups.push(() => records.stop());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-demo-bundles-"));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  // As scripts/demo.ts seeds the workspace before the run.
  await seedDemoSettings(handle.db, t.tenantId, { recordsUrl: records.url });
  expect(await seedDemoPolicies(handle.db, t.tenantId, t.users.owner!, "127.0.0.1")).toBe(true);
  const taskId = newTaskId("case");

  const runtime = RuntimeProcess.start({
    CUSTODY_URL: baseUrl(),
    CUSTODY_API_KEY: t.apiKey,
    DEMO_WORK_DIR: path.join(dir, "work"),
    RECORDS_URL: records.url,
    DEMO_POLL_MS: "200",
    DEMO_TASK_ID: taskId,
    DEMO_PUBLISH: "0",
  });
  cleanups.push(() => runtime.kill());
  const lines: string[] = [];
  await seedDemoMap({
    baseUrl: baseUrl(),
    apiKey: t.apiKey,
    email: t.users.owner!.email,
    password: t.password,
    taskId,
    log: (l) => lines.push(l),
    timeoutMs: 150_000,
  }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${lines.join("\n")}\n${runtime.tail(60)}`);
  });
  await runtime.waitForLine(/attempt 2: waiting for a person/, 90_000);

  const taskFile = path.join(dir, "task.tar.gz");
  const workspaceFile = path.join(dir, "workspace.tar.gz");
  await save(`${baseUrl()}/api/v1/tasks/${encodeURIComponent(taskId)}/export`, owner.cookie, taskFile);
  await save(`${baseUrl()}/api/v1/export`, owner.cookie, workspaceFile);

  for (const file of [taskFile, workspaceFile]) {
    const { status, report, out } = runVerify(file);
    expect(status, out).toBe(0);
    expect(report.ok, out).toBe(true);
    expect(report.checks.length, out).toBeGreaterThan(3);
  }
  // A changed byte fails: the command line is checking, not passing everything.
  const bytes = fs.readFileSync(workspaceFile);
  bytes[bytes.length - 20] = bytes[bytes.length - 20]! ^ 0xff;
  const tampered = path.join(dir, "tampered.tar.gz");
  fs.writeFileSync(tampered, bytes);
  const bad = spawnSync(process.execPath, [path.join(process.cwd(), "bin", "run-custody.mjs"), "verify", tampered], {
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(bad.status).not.toBe(0);
}, 300_000);
