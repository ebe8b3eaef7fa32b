/**
 * `npm run demo`: the whole demo on the embedded database, with nothing to set up.
 *
 * 1. builds the app when `.next` is missing or older than the sources;
 * 2. opens PGlite in `CUSTODY_DATA_DIR` (default `.data/`), applies migrations, seeds the demo tenant,
 *    its four people and the runtime API key (`CUSTODY_DEMO_API_KEY`, else a saved or generated one);
 * 3. starts the dashboard (`npm start`) on `PORT` (default 3000) and the demo records service;
 * 4. runs the reference scenario through the public HTTP API (`scripts/demo-runtime.ts`) unless this data
 *    directory already holds it, and prints the URL and the logins; runs until Ctrl-C;
 * 5. once the demo task has lost its first sandbox, seeds the custody map of its workflow through the API as the
 *    owner (scripts/lib/demo-map.ts), unless the workspace has one;
 * 6. the approval story (`DEMO_PUBLISH=0` leaves it out): the runtime asks for the approval of publish_report,
 *    the approver approves it under policy version 1, and once the sandbox is lost the owner moves the policy to
 *    version 2, so the approval shows stale with the diff until someone re-approves it in the browser
 *    (scripts/lib/demo-approval.ts).
 *
 * Env: PORT, CUSTODY_DATA_DIR, CUSTODY_DEMO_PASSWORD, CUSTODY_DEMO_API_KEY, CUSTODY_RECORDS_PORT, DEMO_PUBLISH;
 * DEMO_INTERRUPT_AT=<point> also runs a disposable run (task DEMO_INTERRUPT_TASK_ID, else `drill-<point>-<random>`)
 * that loses its sandbox at that point, for an interruption exercise (`--interrupt-at` of the demo runtime).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { dataDirLockHolder, openDatabase } from "@/db";
import { loadOrCreateKeyFile } from "@/lib/config/signing-key";
import { seedTenant } from "@/lib/domain/tenancy/seed";
import { DEMO_TENANT_NAME, DEMO_TENANT_SLUG, DEMO_USERS, loadDemoSecrets, saveDemoSecrets } from "./lib/demo-config";
import { newestSourceMtime } from "./lib/build-freshness";
import { seedDemoSettings } from "./lib/demo-settings";
import { seedDemoMap } from "./lib/demo-map";
import { seedDemoApproval } from "./lib/demo-approval";
import { seedDemoPolicies } from "./lib/demo-policies";
import { CRASH_POINTS, isCrashPoint } from "@/lib/demo/interruption-points";
import { TASK_ID_PATTERN } from "@/lib/domain/events/schema";

const root = process.cwd();
const port = Number(process.env.PORT || 3000);
const dataDir = path.resolve(process.env.CUSTODY_DATA_DIR || ".data");
const recordsPort = Number(process.env.CUSTODY_RECORDS_PORT || port + 1);
/** The approval story (publish_report needs approval); `DEMO_PUBLISH=0` leaves it out. */
const publishStory = process.env.DEMO_PUBLISH !== "0";
const children: ChildProcess[] = [];

function log(msg: string) {
  console.log(`[demo] ${msg}`);
}

function buildIfNeeded() {
  // next.config.ts builds into and serves NEXT_DIST_DIR when it is set.
  const dist = process.env.NEXT_DIST_DIR || ".next";
  const buildId = path.join(root, dist, "BUILD_ID");
  if (fs.existsSync(buildId) && fs.statSync(buildId).mtimeMs >= newestSourceMtime(root)) {
    log(`using the existing build (${dist})`);
    return;
  }
  log("building the dashboard (next build; about a minute on first run) …");
  const res = spawnSync(path.join(root, "node_modules", ".bin", "next"), ["build"], {
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", DATABASE_URL: "" },
  });
  if (res.status !== 0) {
    console.error("[demo] next build failed; see the output above.");
    process.exit(1);
  }
}

async function seed(): Promise<{ password: string; apiKey: string; nextauthSecret: string }> {
  fs.mkdirSync(dataDir, { recursive: true });
  const secrets = loadDemoSecrets(dataDir);
  const password = process.env.CUSTODY_DEMO_PASSWORD || secrets.password;
  const wantedKey = process.env.CUSTODY_DEMO_API_KEY || secrets.apiKey;
  loadOrCreateKeyFile(path.join(dataDir, "signing-key.pem"));
  log(`opening the embedded database in ${dataDir} and applying migrations …`);
  const handle = await openDatabase({ dir: dataDir });
  try {
    const seeded = await seedTenant(handle.db, {
      slug: DEMO_TENANT_SLUG,
      name: DEMO_TENANT_NAME,
      users: DEMO_USERS,
      password,
      apiKey: wantedKey,
      apiKeyName: "demo runtime",
    });
    await seedDemoSettings(handle.db, seeded.tenantId, { recordsUrl: `http://127.0.0.1:${recordsPort}` });
    // The demo's policy passes lint and is active before the run starts (version 2 waits for the story).
    const ownerEmail = DEMO_USERS.find((u) => u.role === "owner")!.email;
    if (
      await seedDemoPolicies(
        handle.db,
        seeded.tenantId,
        { userId: seeded.userIds[ownerEmail]!, email: ownerEmail },
        "127.0.0.1",
      )
    ) {
      log("stored the demo policy versions 1 and 2 (both pass lint) and activated version 1");
    }
    if (!process.env.CUSTODY_DEMO_API_KEY) saveDemoSecrets(dataDir, { ...secrets, apiKey: seeded.apiKey });
    return { password, apiKey: seeded.apiKey, nextauthSecret: secrets.nextauthSecret };
  } finally {
    await handle.close();
  }
}

/** Preloaded into every child: it stops the child once this process is gone (scripts/lib/exit-with-parent.cjs). */
const EXIT_WITH_PARENT = path.join(root, "scripts", "lib", "exit-with-parent.cjs");

function start(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  // Own process group: Ctrl-C reaches only this script, which then stops the children in order. When this script is
  // killed outright (SIGKILL, a closed terminal), each child notices and stops by itself, so the data directory and
  // the ports are free for the next start.
  const watchdog = {
    CUSTODY_EXIT_WITH_PID: String(process.pid),
    NODE_OPTIONS: `${env.NODE_OPTIONS ?? ""} --require ${JSON.stringify(EXIT_WITH_PARENT)}`.trim(),
  };
  const child = spawn(cmd, args, { env: { ...env, ...watchdog }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const prefix = (chunk: Buffer) =>
    chunk
      .toString()
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => (l.startsWith(`[${name}]`) ? l : `[${name}] ${l}`))
      .join("\n");
  child.stdout?.on("data", (c: Buffer) => console.log(prefix(c)));
  child.stderr?.on("data", (c: Buffer) => console.error(prefix(c)));
  children.push(child);
  return child;
}

async function waitForHealth(url: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the dashboard did not answer ${url}/api/health within ${timeoutMs / 1000}s`);
}

let stopping = false;
let runtimeChild: ChildProcess | null = null;
let drillChild: ChildProcess | null = null;

/** DEMO_INTERRUPT_AT and its task id, checked before anything starts. */
function interruptionRun(): { point: string; taskId: string } | null {
  const point = process.env.DEMO_INTERRUPT_AT;
  if (!point) return null;
  if (!isCrashPoint(point)) {
    console.error(`[demo] DEMO_INTERRUPT_AT must be one of ${CRASH_POINTS.join(", ")}; got "${point}".`);
    process.exit(2);
  }
  const taskId = process.env.DEMO_INTERRUPT_TASK_ID || `drill-${point.replace(/_/g, "-")}-${Date.now().toString(36)}`;
  if (!TASK_ID_PATTERN.test(taskId)) {
    console.error("[demo] DEMO_INTERRUPT_TASK_ID must be 1–200 letters, digits, '.', '_', ':' or '-'.");
    process.exit(2);
  }
  return { point, taskId };
}

/**
 * Stops the runtime first (it reports run.interrupted and sandbox.destroyed while the dashboard still
 * listens), then the dashboard and the records service.
 */
function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  const rest = () => {
    const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
    let left = running.length;
    if (left === 0) process.exit(code);
    for (const c of running) {
      c.once("exit", () => {
        if (--left === 0) process.exit(code);
      });
      c.kill("SIGTERM");
    }
    setTimeout(() => process.exit(code), 15_000).unref();
  };
  const drill = drillChild;
  if (drill && drill.exitCode === null && drill.signalCode === null) drill.kill("SIGINT");
  const runtime = runtimeChild;
  if (runtime && runtime.exitCode === null && runtime.signalCode === null) {
    const timer = setTimeout(rest, 5000);
    runtime.once("exit", () => {
      clearTimeout(timer);
      rest();
    });
    runtime.kill("SIGINT");
  } else {
    rest();
  }
}

/** True when something accepts connections on 127.0.0.1:`p`. */
function portInUse(p: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port: p });
    socket.setTimeout(1000);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * After a demo was killed outright, its dashboard, records service and runtime stop by themselves within a few
 * seconds (scripts/lib/exit-with-parent.cjs). A start in that window waits for them (the data directory and both
 * ports) for up to 20 s instead of failing; anything still holding them afterwards is reported as before.
 */
async function waitForLeftovers(): Promise<void> {
  const deadline = Date.now() + 20_000;
  let said = false;
  for (;;) {
    const holder = dataDirLockHolder(dataDir);
    const busy = [port, recordsPort].filter((p) => p > 0);
    const ports = (await Promise.all(busy.map(async (p) => ((await portInUse(p)) ? p : null)))).filter(
      (p) => p !== null,
    );
    if (holder === null && ports.length === 0) return;
    if (Date.now() > deadline) return;
    if (!said) {
      log(
        `waiting for ${holder !== null ? `process ${holder} to release ${dataDir}` : `port ${ports.join(" and ")} to be free`} (left by a demo that was stopped?) …`,
      );
      said = true;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function main() {
  await waitForLeftovers();
  const holder = dataDirLockHolder(dataDir);
  if (holder !== null) {
    console.error(
      `[demo] ${dataDir} is in use by process ${holder} (another demo?). Stop it first, or start this one with CUSTODY_DATA_DIR=<another directory> and another PORT.`,
    );
    process.exit(1);
  }
  const drill = interruptionRun();
  buildIfNeeded();
  const { password, apiKey, nextauthSecret } = await seed();
  const baseUrl = `http://localhost:${port}`;
  const serverEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: "",
    CUSTODY_DATA_DIR: dataDir,
    NEXTAUTH_SECRET: nextauthSecret,
    NEXTAUTH_URL: baseUrl,
    NEXT_TELEMETRY_DISABLED: "1",
    PORT: String(port),
  };
  const records = start(
    "records",
    process.execPath,
    [path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/records-service.ts"],
    {
      ...process.env,
      RECORDS_PORT: String(recordsPort),
      RECORDS_STATE_FILE: path.join(dataDir, "records-service.json"),
    },
  );
  records.on("exit", (code) => code && log(`records service exited with ${code}`));
  const server = start(
    "dashboard",
    process.execPath,
    ["--import", "tsx", path.join(root, "scripts", "serve.ts"), "-p", String(port)],
    serverEnv,
  );
  server.on("exit", (code) => {
    if (stopping) return;
    log(`dashboard exited (${code}); stopping.`);
    shutdown(code ?? 1);
  });
  await waitForHealth(baseUrl);

  console.log(`
  Run Custody demo is up: ${baseUrl}
  Sign in as any of
    owner@demo.test       (workflow owner)
    approver@demo.test    (approver)
    responder@demo.test   (incident responder: reconciles)
    viewer@demo.test      (read only)
  Password: ${password}${process.env.CUSTODY_DEMO_PASSWORD ? " (from CUSTODY_DEMO_PASSWORD)" : " (generated; kept in " + path.join(dataDir, "demo-secrets.json") + ")"}
  Data: ${dataDir}   Ctrl-C stops everything.
`);

  const runtime = (runtimeChild = start(
    "runtime",
    process.execPath,
    [path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/demo-runtime.ts"],
    {
      ...process.env,
      CUSTODY_URL: baseUrl,
      CUSTODY_API_KEY: apiKey,
      DEMO_WORK_DIR: path.join(dataDir, "demo-work"),
      RECORDS_URL: `http://127.0.0.1:${recordsPort}`,
      // The story's run is never the exercise's: DEMO_INTERRUPT_AT is for the disposable run below.
      DEMO_INTERRUPT_AT: "",
      DEMO_PUBLISH: publishStory ? "1" : "0",
    },
  ));
  runtime.on("exit", (code, signal) => {
    if (stopping) log("the demo runtime stopped (it reported the interruption; the next start continues the story)");
    else log(code ? `the demo runtime exited with ${code}` : "the demo runtime finished its story");
    void signal;
  });

  if (drill) {
    log(
      `interruption exercise: task ${drill.taskId} loses its sandbox at ${drill.point}; link it to your exercise (Maps → the map → the exercise)`,
    );
    drillChild = start(
      "drill",
      process.execPath,
      [
        path.join(root, "node_modules", "tsx", "dist", "cli.mjs"),
        "scripts/demo-runtime.ts",
        "--interrupt-at",
        drill.point,
        "--task-id",
        drill.taskId,
      ],
      {
        ...process.env,
        CUSTODY_URL: baseUrl,
        CUSTODY_API_KEY: apiKey,
        DEMO_WORK_DIR: path.join(dataDir, "demo-work"),
        RECORDS_URL: `http://127.0.0.1:${recordsPort}`,
        DEMO_CRASH_AT: "",
      },
    );
    drillChild.on("exit", (code) => {
      if (!stopping)
        log(
          code ? `the exercise run ${drill.taskId} exited with ${code}` : `the exercise run ${drill.taskId} finished`,
        );
    });
  }

  if (publishStory) {
    seedDemoApproval({ baseUrl, apiKey, password, taskId: process.env.DEMO_TASK_ID || "case-918", log }).catch(
      (err: unknown) => {
        if (!stopping) log(`the approval story was not seeded: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
  }

  // The custody map of the demo workflow, with an exercise linked to the demo task (once per data directory).
  seedDemoMap({
    baseUrl,
    apiKey,
    email: "owner@demo.test",
    password,
    taskId: process.env.DEMO_TASK_ID || "case-918",
    log,
  }).catch((err: unknown) => {
    if (!stopping) log(`the demo custody map was not seeded: ${err instanceof Error ? err.message : String(err)}`);
  });
}

process.on("exit", () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});
process.on("SIGINT", () => shutdown(0));
process.on("SIGTERM", () => shutdown(0));
main().catch((err) => {
  console.error("[demo] failed:", err instanceof Error ? err.message : err);
  shutdown(1);
});
