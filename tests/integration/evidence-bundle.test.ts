/**
 * Task evidence bundles from the real server (`GET /api/v1/tasks/{id}/export`, decision 0037), checked by the offline
 * verifier and by `npx run-custody verify`, then tampered with: every tamper case is caught and named (check, file,
 * record, field). Tamper cases that re-sign the envelope use the server's own key, as an insider who held it would:
 * they show the per-record checks catch what a digest check alone would not explain.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sign } from "node:crypto";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import { describe, expect, inject, it } from "vitest";
import { generateSigningKey, publicJwk, signingKeyFromString, type SigningKey } from "@/lib/domain/crypto/signing";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
import { ATTESTATION_FILE, DSSE_PAYLOAD_TYPE, dssePae } from "@/lib/export/bundle-format";
import { readBundleArchive } from "@/lib/export/read-archive";
import { verifyBundle, type VerifyReport } from "@/lib/export/verify";
import { askGate, checkpoint, newKey, postReceipt, receiptBody, sendEvents } from "./support/custody-calls";
import { unknownEffect } from "./support/seeding";
import { api, baseUrl, createTestTenant, makeEvent, newTaskId, testDbForFile, type TestTenant } from "./helpers";

const handle = testDbForFile();
const run = promisify(execFile);

async function exportTask(auth: string, taskId: string): Promise<{ status: number; bytes: Uint8Array; type: string }> {
  const res = await fetch(`${baseUrl()}/api/v1/tasks/${encodeURIComponent(taskId)}/export`, {
    headers: { authorization: `Bearer ${auth}` },
  });
  return {
    status: res.status,
    bytes: new Uint8Array(await res.arrayBuffer()),
    type: res.headers.get("content-type") ?? "",
  };
}

type Files = Array<[string, Uint8Array]>;

async function unpack(bytes: Uint8Array): Promise<Files> {
  return [...(await readBundleArchive(bytes)).entries()];
}

async function pack(files: Files): Promise<Uint8Array> {
  const p = tar.pack();
  const collected = (async () => {
    const parts: Buffer[] = [];
    for await (const c of p as AsyncIterable<Buffer>) parts.push(c);
    return parts;
  })();
  for (const [name, body] of files) p.entry({ name }, Buffer.from(body));
  p.finalize();
  const chunks = await collected;
  return new Uint8Array(gzipSync(Buffer.concat(chunks)));
}

/** Re-signs the envelope over the files as they now are (subjects in archive order), with `key`. */
function resign(files: Files, key: SigningKey): Files {
  const att = files.find(([n]) => n === ATTESTATION_FILE)!;
  const env = JSON.parse(Buffer.from(att[1]).toString("utf8")) as { payload: string };
  const statement = JSON.parse(Buffer.from(env.payload, "base64").toString("utf8")) as Record<string, unknown>;
  statement.subject = files
    .filter(([n]) => n !== ATTESTATION_FILE)
    .map(([name, body]) => ({ name, digest: { sha256: sha256Hex(body) } }));
  const payload = Buffer.from(JSON.stringify(statement));
  const sig = sign(null, dssePae(DSSE_PAYLOAD_TYPE, payload), key.privateKey).toString("base64");
  const envelope = {
    payloadType: DSSE_PAYLOAD_TYPE,
    payload: payload.toString("base64"),
    signatures: [{ keyid: key.kid, sig }],
  };
  return files.map(([n, b]) =>
    n === ATTESTATION_FILE ? [n, new Uint8Array(Buffer.from(JSON.stringify(envelope)))] : [n, b],
  );
}

const text = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const bytes = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));
const lines = (b: Uint8Array) => text(b).split("\n").filter(Boolean);
const setFile = (files: Files, name: string, body: Uint8Array): Files =>
  files.map(([n, b]) => (n === name ? [n, body] : [n, b]));
const get = (files: Files, name: string) => files.find(([n]) => n === name)![1];

/** Changes one alphanumeric byte near the middle of `body` to another. */
function flipByte(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body);
  for (let i = Math.floor(out.length / 2); i < out.length; i++) {
    const c = out[i]!;
    if ((c >= 0x61 && c <= 0x66) || (c >= 0x30 && c <= 0x39)) {
      out[i] = c === 0x61 ? 0x62 : 0x61;
      return out;
    }
  }
  throw new Error("no byte to flip");
}

function expectFailure(r: VerifyReport, check: string, where: { file?: string; record?: number; field?: string }) {
  expect(r.ok).toBe(false);
  expect(r.first_failure, JSON.stringify(r.first_failure)).toMatchObject({ check, ...where });
}

/** A task with checkpoints, events, an approved and interrupted side effect, a refused receipt and a gate ask. */
async function richTask(t: TestTenant): Promise<string> {
  const { taskId } = await unknownEffect(handle.db, t, { declared: "approved" });
  await checkpoint(t, taskId, { phase: "writing", attempt: 1 });
  await checkpoint(t, taskId, { phase: "reviewing", attempt: 1 });
  await sendEvents(t, [
    makeEvent(taskId, { type: "tool.called", attrs: { tool: "search", call_id: "c-1" } }),
    makeEvent(taskId, { type: "egress.allowed", attrs: { host: "api.example.com" } }),
  ]);
  // A receipt for a write the server never saw an intent for: kept as evidence, not applied.
  const refused = await postReceipt(t.apiKey, taskId, "send_mail", receiptBody(newKey()));
  expect(refused.status, refused.text).toBeLessThan(500);
  expect((await askGate(t.apiKey, taskId)).status).toBe(200);
  return taskId;
}

describe("task evidence bundle", () => {
  it("exports a bundle that verifies offline, by the module and by `npx run-custody verify`", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = await richTask(t);
    const out = await exportTask(t.apiKey, taskId);
    expect(out.status).toBe(200);
    expect(out.type).toBe("application/gzip");
    const report = await verifyBundle(out.bytes);
    expect(report.first_failure).toBeNull();
    expect(report.key_source).toBe("bundle");

    const files = await unpack(out.bytes);
    const names = files.map(([n]) => n);
    for (const n of [
      "task.json",
      "checkpoints/000001.jsonl",
      "events/000001.jsonl",
      "side-effects/000001.jsonl",
      "refused-receipts/000001.jsonl",
      "approvals/000001.jsonl",
      "gate-asks/000001.jsonl",
      "artifacts/000001.jsonl",
      "audit/entries/000001.jsonl",
      "audit/links/000001.jsonl",
      "audit/head.json",
      "inventory.json",
      "inventory.md",
      "keys.jwks.json",
      "bundle.json",
    ])
      expect(names).toContain(n);
    expect(names[names.length - 1]).toBe(ATTESTATION_FILE);
    expect(lines(get(files, "checkpoints/000001.jsonl"))).toHaveLength(3);
    expect(lines(get(files, "approvals/000001.jsonl")).length).toBeGreaterThan(0);
    expect(lines(get(files, "refused-receipts/000001.jsonl")).length).toBeGreaterThan(0);
    expect(lines(get(files, "audit/entries/000001.jsonl")).length).toBeGreaterThan(0);
    const inventory = JSON.parse(text(get(files, "inventory.json"))) as {
      contents: Array<{ file: string; service_specific_semantics: string }>;
      not_included: Array<{ content: string }>;
    };
    expect(inventory.contents.map((c) => c.file)).toContain("checkpoints/*.jsonl");
    expect(inventory.not_included.map((c) => c.content)).toContain(
      "Artifact bytes not uploaded, changed in the store, or over the caps",
    );
    expect(inventory.contents.map((c) => c.file)).toContain("artifact-bytes/<sha256>, artifact-bytes/*.jsonl");
    expect(text(get(files, "inventory.md"))).toContain("Service-specific semantics");

    // The command line: exit 0, one line per check, the key source said; pinned keys from GET /api/v1/signing-keys.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-bundle-"));
    try {
      const file = path.join(dir, "bundle.tar.gz");
      fs.writeFileSync(file, out.bytes);
      const bin = path.join(process.cwd(), "bin/run-custody.mjs");
      const ok = await run(process.execPath, [bin, "verify", file]);
      expect(ok.stdout).toContain("VERIFIED");
      expect(ok.stdout).toContain("keys came from the bundle itself");
      const keys = await api(t.apiKey).get("/api/v1/signing-keys");
      fs.writeFileSync(path.join(dir, "keys.json"), JSON.stringify(keys.body));
      const pinned = await run(process.execPath, [bin, "verify", file, "--key", path.join(dir, "keys.json"), "--json"]);
      expect(JSON.parse(pinned.stdout)).toMatchObject({ ok: true, key_source: "pinned" });

      fs.writeFileSync(file, await pack(setFile(files, "task.json", flipByte(get(files, "task.json")))));
      const bad = await run(process.execPath, [bin, "verify", file]).catch((e: { code: number; stdout: string }) => e);
      expect("code" in bad ? bad.code : 0).toBe(1);
      expect(bad.stdout).toMatch(/FIRST FAILURE: digests: file task\.json/);

      fs.writeFileSync(file, "not a bundle");
      const notGz = await run(process.execPath, [bin, "verify", file]).catch(
        (e: { code: number; stdout: string }) => e,
      );
      expect("code" in notGz ? notGz.code : 0).toBe(1);
      expect(notGz.stdout).toContain("not a gzip file");
      expect(fs.readdirSync(dir).sort()).toEqual(["bundle.tar.gz", "keys.json"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("missing task and another tenant's task → 404", async () => {
    const t = await createTestTenant(handle.db);
    const other = await createTestTenant(handle.db);
    const theirs = newTaskId();
    await checkpoint(other, theirs);
    expect((await exportTask(t.apiKey, newTaskId())).status).toBe(404);
    expect((await exportTask(t.apiKey, theirs)).status).toBe(404);
  });

  it("every tamper case is caught and named", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = await richTask(t);
    const otherTask = await richTask(t);
    const files = await unpack((await exportTask(t.apiKey, taskId)).bytes);
    const otherFiles = await unpack((await exportTask(t.apiKey, otherTask)).bytes);
    const serverKey = signingKeyFromString(inject("signingKeyPem"));
    const verify = async (f: Files, pinnedKeys?: unknown) => verifyBundle(await pack(f), { pinnedKeys });

    // One byte changed in each file: the file is named.
    for (const [name, body] of files) {
      if (!body.length) continue; // an empty part (a stream with no record) has no byte to change; removing it is below
      const r = await verify(setFile(files, name, flipByte(body)));
      expect(r.ok, name).toBe(false);
      expect(r.first_failure?.file, `${name}: ${JSON.stringify(r.first_failure)}`).toBe(name);
    }
    // A file removed, a file added.
    expectFailure(await verify(files.filter(([n]) => n !== "events/000001.jsonl")), "digests", {
      file: "events/000001.jsonl",
    });
    expectFailure(await verify(files.filter(([n]) => n !== "exercises/000001.jsonl")), "digests", {
      file: "exercises/000001.jsonl",
    });
    expectFailure(await verify([...files.slice(0, 2), ["notes.txt", bytes("hi")], ...files.slice(2)]), "digests", {
      file: "notes.txt",
    });

    // Changed records under a re-signed envelope: the record checks name record and field.
    const cps = lines(get(files, "checkpoints/000001.jsonl"));
    const changed = JSON.parse(cps[1]!) as { record: { phase: string } };
    changed.record.phase = "done";
    expectFailure(
      await verify(
        resign(
          setFile(
            files,
            "checkpoints/000001.jsonl",
            bytes([cps[0], JSON.stringify(changed), cps[2]].join("\n") + "\n"),
          ),
          serverKey,
        ),
      ),
      "checkpoints",
      { file: "checkpoints/000001.jsonl", record: 2, field: "digest" },
    );
    const entries = lines(get(files, "audit/entries/000001.jsonl"));
    const entry = JSON.parse(entries[0]!) as { details: Record<string, unknown> };
    entry.details = { ...entry.details, forged: true };
    expectFailure(
      await verify(
        resign(
          setFile(
            files,
            "audit/entries/000001.jsonl",
            bytes([JSON.stringify(entry), ...entries.slice(1)].join("\n") + "\n"),
          ),
          serverKey,
        ),
      ),
      "audit chain",
      { file: "audit/entries/000001.jsonl", record: 1, field: "hash" },
    );

    // Checkpoint versions reordered.
    expectFailure(
      await verify(
        resign(
          setFile(files, "checkpoints/000001.jsonl", bytes([cps[1], cps[0], cps[2]].join("\n") + "\n")),
          serverKey,
        ),
      ),
      "checkpoints",
      { file: "checkpoints/000001.jsonl", record: 2, field: "version" },
    );
    // The newest checkpoint replaced by an older, validly signed one put in its place.
    const older = JSON.parse(cps[1]!) as { version: number };
    older.version = (JSON.parse(cps[2]!) as { version: number }).version;
    expectFailure(
      await verify(
        resign(
          setFile(files, "checkpoints/000001.jsonl", bytes([cps[0], cps[1], JSON.stringify(older)].join("\n") + "\n")),
          serverKey,
        ),
      ),
      "checkpoints",
      { file: "checkpoints/000001.jsonl", record: 3, field: "binding_signature" },
    );

    // The key set replaced: without re-signing the envelope names the key; an attacker who re-signs with their own
    // key still fails on the checkpoints (signed by the server), and pinning the server's keys names the key set.
    const attacker = generateSigningKey().key;
    const theirKeys = bytes(JSON.stringify({ keys: [publicJwk(attacker)] }));
    expectFailure(await verify(setFile(files, "keys.jwks.json", theirKeys)), "envelope", {
      file: ATTESTATION_FILE,
      field: "keyid",
    });
    const resigned = resign(setFile(files, "keys.jwks.json", theirKeys), attacker);
    expectFailure(await verify(resigned), "checkpoints", {
      file: "checkpoints/000001.jsonl",
      record: 1,
      field: "key_id",
    });
    expectFailure(await verify(resigned, { keys: [publicJwk(serverKey)] }), "keys", {
      file: "keys.jwks.json",
      field: "kid",
    });

    // Another task's file replayed into this bundle.
    const replay = setFile(files, "events/000001.jsonl", get(otherFiles, "events/000001.jsonl"));
    expectFailure(await verify(replay), "digests", { file: "events/000001.jsonl", field: "sha256" });
    expectFailure(await verify(resign(replay, serverKey)), "manifest", {
      file: "events/000001.jsonl",
      record: 1,
      field: "task_id",
    });
    const replayCps = setFile(files, "checkpoints/000001.jsonl", get(otherFiles, "checkpoints/000001.jsonl"));
    expectFailure(await verify(resign(replayCps, serverKey)), "manifest", {
      file: "checkpoints/000001.jsonl",
      record: 1,
      field: "task_id",
    });
  });
});
