/**
 * `npm run demo` killed with SIGKILL mid-run, then started again on the same data directory: the story continues
 * (docs/decisions/0011-crash-safety.md).
 *
 * Runs the real `scripts/demo.ts` (embedded PGlite in a fresh data directory, the dashboard, the records service and
 * the demo runtime) and kills the demo's whole process group with SIGKILL right after the runtime's intent for
 * `update_record` was acknowledged — the write to the records service is then in flight. It checks that the dashboard,
 * the records service and the runtime stop by themselves (the data directory and ports come free), starts the demo
 * again, and follows the story: the runtime continues with attempt 2, the gate stops on the unknown write, a responder
 * settles it by the records service's lookup, the runtime finishes, and the record was updated exactly once.
 *
 * Two full demo starts take about a minute on an idle two-core machine (several on a loaded one), too slow for every
 * CI run: it runs with `npm run test:crash-demo` (after a build). In CI, the pieces are tested directly and bounded:
 * tests/integration/pglite-crash.test.ts (acknowledged commits survive SIGKILL on PGlite) and
 * tests/unit/exit-with-parent.test.ts (the demo's children stop when the demo is killed).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { dataDirLockHolder } from "@/db";
import { ChildLines } from "../support/child-lines";
import { freePort } from "../support/env";
import { api, trySignIn } from "../integration/helpers";

const ROOT = process.cwd();
const TASK = "case-918";
const EFFECT = "update_record";
const started: ChildLines[] = [];
let dataDir = "";

afterAll(async () => {
  for (const d of started) d.signal("SIGKILL");
  // The children stop by themselves within seconds; give them that before removing their directory.
  const deadline = Date.now() + 20_000;
  while (dataDir && dataDirLockHolder(dataDir) !== null && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 250));
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("npm run demo under SIGKILL (npm run test:crash-demo)", () => {
  test("killed mid-write and started again on the same data directory, the story continues to its end", async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-demo-crash-"));
    const port = await freePort();
    const recordsPort = await freePort();
    const password = `pw-${Math.random().toString(36).slice(2)}`;
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? os.tmpdir(),
      TMPDIR: os.tmpdir(),
      NEXT_TELEMETRY_DISABLED: "1",
      NEXT_DIST_DIR: process.env.NEXT_DIST_DIR || ".next",
      PORT: String(port),
      CUSTODY_RECORDS_PORT: String(recordsPort),
      CUSTODY_DATA_DIR: dataDir,
      CUSTODY_DEMO_PASSWORD: password,
      DEMO_POLL_MS: "500",
    };
    const demo = () => {
      const d = new ChildLines(
        process.execPath,
        [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/demo.ts"],
        { cwd: ROOT, env },
      );
      started.push(d);
      return d;
    };

    // 1. The first run, killed (the whole process group, SIGKILL) once the intent is acknowledged.
    const first = demo();
    await first.waitFor(/\[runtime\] attempt 1: intent update_record → go/, 240_000);
    await first.kill();

    // 2. Its dashboard, records service and runtime notice and stop: the data directory and ports come free.
    const deadline = Date.now() + 20_000;
    while (dataDirLockHolder(dataDir) !== null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(dataDirLockHolder(dataDir), "the killed demo's dashboard still holds the data directory").toBeNull();

    // 3. The second run continues the story from what the first one stored.
    const second = demo();
    await second.waitFor(
      /\[runtime\] task case-918 stopped midway \(phase \w+, attempt 1\): continuing with attempt 2/,
      240_000,
    );
    await second.waitFor(/\[runtime\] attempt 2: waiting for a person/, 120_000);
    expect(
      second.lines.some((l) => /side_effect_unknown/.test(l)),
      second.tail(),
    ).toBe(true);

    // 4. A responder settles the write by the records service's answer (applied or not), as in the browser.
    const base = `http://localhost:${port}`;
    const signedIn = await trySignIn("responder@demo.test", password, { base });
    expect(signedIn.cookie, `sign-in: ${signedIn.status} ${signedIn.url}`).not.toBeNull();
    const responder = api({ cookie: signedIn.cookie! }, base);
    const effectPath = `/api/v1/tasks/${TASK}/side-effects/${EFFECT}/reconcile`;
    let settled = await responder.post(effectPath, {
      outcome: "completed",
      use_lookup: true,
      evidence: "The records service's lookup found the write.",
    });
    if (settled.status === 422) {
      settled = await responder.post(effectPath, {
        outcome: "not_applied",
        evidence: "The records service's lookup did not find the write.",
      });
    }
    expect(settled.status, settled.text).toBe(200);

    // 5. The runtime resumes and finishes; the record was updated exactly once across the kill.
    await second.waitFor(/\[demo\] the demo runtime finished its story/, 120_000);
    const records = JSON.parse(fs.readFileSync(path.join(dataDir, "records-service.json"), "utf8")) as {
      records: Record<string, { update_count?: number }>;
    };
    expect(Object.values(records.records).map((r) => r.update_count)).toEqual([1]);
    const task = await responder.get<{ phase: string; current_attempt: number; signature_valid?: boolean }>(
      `/api/v1/tasks/${TASK}`,
    );
    expect(task.status, task.text).toBe(200);
    expect(task.body).toMatchObject({ phase: "done", current_attempt: 2 });

    second.signal("SIGINT");
    await second.exit(30_000);
  }, 600_000);
});
