/**
 * The evidence bundle's writer and offline verifier on a bundle made here (decision 0037): a clean bundle verifies;
 * bad archives (not gzip, truncated, `..`, absolute path, symlink, oversize) are refused with a sentence, never a throw.
 */
import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import { describe, expect, it } from "vitest";
import { canonicalJson, sha256Hex } from "@/lib/domain/crypto/canonical";
import { generateSigningKey, publicJwk, signCanonical } from "@/lib/domain/crypto/signing";
import { BundleWriter } from "@/lib/export/bundle-writer";
import { verifyBundle } from "@/lib/export/verify";

async function collect(stream: AsyncIterable<unknown>): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

const { key } = generateSigningKey();

async function smallBundle(): Promise<Uint8Array> {
  const w = new BundleWriter({ key, kind: "task", tenantId: "t-1", taskId: "case-1" });
  const out = collect(w.output);
  await w.addJson("task.json", { task_id: "case-1", latest_version: 1 });
  const record = { task_id: "case-1", phase: "started" };
  const signed = signCanonical(record, key);
  const cp = w.jsonl("checkpoints");
  await cp.write({
    task_id: "case-1",
    version: 1,
    attempt: null,
    record,
    digest: signed.digest,
    signature: signed.signature,
    key_id: key.kid,
    signature_format: 1,
    binding_signature: null,
  });
  await cp.end();
  for (const s of ["side-effects", "approvals", "refused-receipts", "audit/entries"]) await w.jsonl(s).end();
  await w.addJson("audit/head.json", { seq: 0, hash: "0".repeat(64) });
  await w.finish();
  return out;
}

async function rawTar(
  entries: Array<{ name: string; type?: "file" | "symlink" | "directory"; body?: string; size?: number }>,
) {
  const pack = tar.pack();
  const out = collect(pack);
  for (const e of entries) {
    if (e.type === "symlink") pack.entry({ name: e.name, type: "symlink", linkname: "/etc/passwd" });
    else if (e.type === "directory") pack.entry({ name: e.name, type: "directory" });
    else pack.entry({ name: e.name }, e.body ?? "x");
  }
  pack.finalize();
  return out;
}

/**
 * A workspace bundle as decision 0037 lays it out: each task under `tasks/<nnnnnn>/` (listed in `bundle.json`'s
 * `tasks`), the workspace's whole audit chain at the top. `tamper` changes the second entry's details.
 */
async function workspaceBundle(tamper = false): Promise<Uint8Array> {
  const w = new BundleWriter({ key, kind: "workspace", tenantId: "t-1" });
  const out = collect(w.output);
  const tasks = [
    { dir: "tasks/000001", task_id: "case-1" },
    { dir: "tasks/000002", task_id: "case:2" },
  ];
  for (const t of tasks) {
    await w.addJson(`${t.dir}/task.json`, { task_id: t.task_id, latest_version: 1 });
    const record = { task_id: t.task_id, phase: "started" };
    const signed = signCanonical(record, key);
    const cp = w.jsonl(`${t.dir}/checkpoints`);
    await cp.write({
      task_id: t.task_id,
      version: 1,
      attempt: null,
      record,
      digest: signed.digest,
      signature: signed.signature,
      key_id: key.kid,
      signature_format: 1,
      binding_signature: null,
    });
    await cp.end();
    for (const s of ["side-effects", "approvals", "refused-receipts"]) await w.jsonl(`${t.dir}/${s}`).end();
  }
  const audit = w.jsonl("audit/entries");
  let prev = "0".repeat(64);
  for (let seq = 1; seq <= 3; seq++) {
    const entry = {
      seq,
      at: new Date(seq * 1000).toISOString(),
      actor_kind: "system",
      actor_id: "system",
      actor_label: "test",
      action: "task.checkpointed",
      target: `task:case-${seq}`,
      details: { n: seq },
    };
    const hash = sha256Hex(
      prev +
        canonicalJson({
          tenantId: "t-1",
          seq,
          at: entry.at,
          actorKind: entry.actor_kind,
          actorId: entry.actor_id,
          actorLabel: entry.actor_label,
          action: entry.action,
          target: entry.target,
          details: entry.details,
        }),
    );
    await audit.write({ ...entry, details: tamper && seq === 2 ? { n: 20 } : entry.details, prev_hash: prev, hash });
    prev = hash;
  }
  await audit.end();
  await w.addJson("audit/head.json", { seq: 3, hash: prev });
  await w.finish({ tasks });
  return out;
}

describe("evidence bundle", () => {
  it("a written bundle verifies, and says where the keys came from", async () => {
    const report = await verifyBundle(await smallBundle());
    expect(report.first_failure).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.key_source).toBe("bundle");
    expect(report.checks.map((c) => c.check)).toEqual([
      "archive",
      "keys",
      "envelope",
      "statement",
      "digests",
      "manifest",
      "checkpoints",
      "audit chain",
      "references",
    ]);
    const pinned = await verifyBundle(await smallBundle(), { pinnedKeys: { keys: [publicJwk(key)] } });
    expect(pinned.ok).toBe(true);
    expect(pinned.key_source).toBe("pinned");
    const other = await verifyBundle(await smallBundle(), {
      pinnedKeys: { keys: [publicJwk(generateSigningKey().key)] },
    });
    expect(other.first_failure).toMatchObject({
      check: "keys",
      file: "keys.jwks.json",
      field: "kid",
    });
  });

  it("a workspace bundle verifies per task and along its whole chain", async () => {
    const report = await verifyBundle(await workspaceBundle());
    expect(report.first_failure).toBeNull();
    expect(report.checks.map((c) => c.check)).toContain("checkpoints (case:2)");
    expect(report.checks.map((c) => c.check)).toContain("audit chain");
    const tampered = await verifyBundle(await workspaceBundle(true));
    expect(tampered.first_failure).toMatchObject({
      check: "audit chain",
      file: "audit/entries/000001.jsonl",
      record: 2,
      field: "hash",
    });
  });

  it("refuses what is not a bundle, with a sentence", async () => {
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ["not gzip", new TextEncoder().encode("hello"), /not a gzip file/],
      ["truncated gzip", (await smallBundle()).slice(0, 200), /truncated or corrupt/],
      ["gzip of not-tar", gzipSync("just text, no tar header here".repeat(40)), /not a ustar header|truncated/],
      ["dot-dot", gzipSync(await rawTar([{ name: "../evil.txt" }])), /leaves the bundle/],
      ["absolute", gzipSync(await rawTar([{ name: "/etc/evil" }])), /absolute path/],
      ["symlink", gzipSync(await rawTar([{ name: "link", type: "symlink" }])), /symbolic link/],
      ["directory", gzipSync(await rawTar([{ name: "dir/", type: "directory" }])), /directory/],
      [
        "oversize",
        gzipSync(await rawTar([{ name: "big.bin", body: "a".repeat(16 * 1024 * 1024 + 1) }])),
        /over the .*file limit/,
      ],
      ["duplicate", gzipSync(await rawTar([{ name: "a.json" }, { name: "a.json" }])), /appears twice/],
    ];
    for (const [label, bytes, message] of cases) {
      const report = await verifyBundle(bytes);
      expect(report.ok, label).toBe(false);
      expect(report.first_failure?.check, label).toBe("archive");
      expect(report.first_failure?.message, label).toMatch(message);
    }
  });
});
