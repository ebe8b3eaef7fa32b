/**
 * Artifact bytes in a task's evidence bundle (decision 0050): the bundle carries each uploaded artifact's bytes as
 * `artifact-bytes/<sha256>` with an `artifact-bytes` record per digest; the offline verifier hashes them against the
 * digest; an artifact whose bytes were never uploaded or were changed in the store is listed as omitted, with its
 * reason, in the records and in `bundle.json`. A changed byte is caught — also when an insider re-signs the envelope.
 */
import { createHash, sign } from "node:crypto";
import { gzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import tar from "tar-stream";
import { describe, expect, inject, it } from "vitest";
import { signingKeyFromString, type SigningKey } from "@/lib/domain/crypto/signing";
import { ATTESTATION_FILE, DSSE_PAYLOAD_TYPE, dssePae } from "@/lib/export/bundle-format";
import { readBundleArchive } from "@/lib/export/read-archive";
import { verifyBundle } from "@/lib/export/verify";
import { checkpoint } from "./support/custody-calls";
import { baseUrl, createTestTenant, newTaskId, testDbForFile, type TestTenant } from "./helpers";

const handle = testDbForFile();

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

type Files = Array<[string, Uint8Array]>;

async function exportTask(auth: string, taskId: string): Promise<Files> {
  const res = await fetch(`${baseUrl()}/api/v1/tasks/${encodeURIComponent(taskId)}/export`, {
    headers: { authorization: `Bearer ${auth}` },
  });
  expect(res.status).toBe(200);
  return [...(await readBundleArchive(new Uint8Array(await res.arrayBuffer()))).entries()];
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
  return new Uint8Array(gzipSync(Buffer.concat(await collected)));
}

/** Re-signs the envelope over the files as they now are, with `key` (an insider who held the server's key). */
function resign(files: Files, key: SigningKey): Files {
  const att = files.find(([n]) => n === ATTESTATION_FILE)!;
  const env = JSON.parse(Buffer.from(att[1]).toString("utf8")) as { payload: string };
  const statement = JSON.parse(Buffer.from(env.payload, "base64").toString("utf8")) as Record<string, unknown>;
  statement.subject = files
    .filter(([n]) => n !== ATTESTATION_FILE)
    .map(([name, body]) => ({ name, digest: { sha256: sha(body) } }));
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

async function upload(t: TestTenant, taskId: string, bytes: Buffer): Promise<void> {
  const res = await fetch(`${baseUrl()}/api/v1/tasks/${encodeURIComponent(taskId)}/artifacts/${sha(bytes)}/content`, {
    method: "PUT",
    headers: { authorization: `Bearer ${t.apiKey}`, "content-type": "application/octet-stream" },
    body: new Uint8Array(bytes),
  });
  expect(res.status, await res.text()).toBe(201);
}

const json = (files: Files, name: string) =>
  JSON.parse(Buffer.from(files.find(([n]) => n === name)![1]).toString("utf8")) as Record<string, unknown>;
const records = (files: Files, stream: string) =>
  files
    .filter(([n]) => n.startsWith(`${stream}/`) && n.endsWith(".jsonl"))
    .flatMap(([, b]) => Buffer.from(b).toString("utf8").split("\n").filter(Boolean))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("a task bundle carries its artifacts' bytes", () => {
  it("includes uploaded bytes by digest, lists the others as omitted with a reason, and verifies", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("bundle-bytes");
    const report = Buffer.from("# Report\n\nAll fine.\n");
    const image = Buffer.from([0, 1, 2, 3, 254, 255]);
    const never = Buffer.from("never uploaded");
    await checkpoint(t, taskId, {
      artifacts: [
        { ref: "out/report.md", sha256: sha(report), size: report.length, media_type: "text/markdown" },
        { ref: "out/image.bin", sha256: sha(image), size: image.length },
        { ref: "out/never.txt", sha256: sha(never), size: never.length },
      ],
    });
    await upload(t, taskId, report);
    await upload(t, taskId, image);

    const files = await exportTask(t.apiKey, taskId);
    const byName = new Map(files);
    expect(Buffer.from(byName.get(`artifact-bytes/${sha(report)}`)!).equals(report)).toBe(true);
    expect(Buffer.from(byName.get(`artifact-bytes/${sha(image)}`)!).equals(image)).toBe(true);
    expect(byName.has(`artifact-bytes/${sha(never)}`)).toBe(false);
    const rows = records(files, "artifact-bytes");
    expect(rows).toHaveLength(3);
    expect(rows.find((r) => r.sha256 === sha(never))).toMatchObject({
      task_id: taskId,
      included: false,
      file: null,
      omitted_reason: "not_uploaded",
    });
    expect(rows.find((r) => r.sha256 === sha(report))).toMatchObject({
      included: true,
      file: `artifact-bytes/${sha(report)}`,
      size_bytes: report.length,
    });
    const manifest = json(files, "bundle.json");
    expect(String(manifest.artifact_bytes_note)).toContain("1 artifact(s)' bytes are not in this bundle");
    expect(manifest.counts).toMatchObject({ artifact_bytes_included: 2, artifact_bytes_omitted: 1 });

    const verified = await verifyBundle(await pack(files));
    expect(verified.ok, JSON.stringify(verified.first_failure)).toBe(true);
    expect(verified.checks.find((c) => c.check === "artifact bytes")).toMatchObject({
      ok: true,
      message: expect.stringContaining("2 artifact(s)' bytes hash to their digests; 1 omitted"),
    });
  });

  it("the verifier rejects one changed byte, also under a re-signed envelope", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("bundle-bytes");
    const report = Buffer.from("# Report\n\nThe figures are final.\n");
    await checkpoint(t, taskId, {
      artifacts: [{ ref: "out/report.md", sha256: sha(report), size: report.length, media_type: "text/markdown" }],
    });
    await upload(t, taskId, report);
    const files = await exportTask(t.apiKey, taskId);
    const name = `artifact-bytes/${sha(report)}`;
    const changed: Files = files.map(([n, b]) => {
      if (n !== name) return [n, b];
      const copy = Buffer.from(b);
      copy[2] = copy[2]! ^ 0x01;
      return [n, new Uint8Array(copy)];
    });

    const plain = await verifyBundle(await pack(changed));
    expect(plain.ok).toBe(false);
    expect(plain.first_failure).toMatchObject({ check: "digests", file: name, field: "sha256" });

    const resigned = await verifyBundle(await pack(resign(changed, signingKeyFromString(inject("signingKeyPem")))));
    expect(resigned.ok).toBe(false);
    expect(resigned.first_failure).toMatchObject({ check: "artifact bytes", file: name, field: "sha256" });
    expect(resigned.first_failure?.message).toContain("do not hash to its digest");
  });

  it("changed bytes whose stream the manifest no longer lists do not verify, even re-signed", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("bundle-bytes");
    const report = Buffer.from("# Report\n\nThe figures are final.\n");
    await checkpoint(t, taskId, {
      artifacts: [{ ref: "out/report.md", sha256: sha(report), size: report.length, media_type: "text/markdown" }],
    });
    await upload(t, taskId, report);
    const files = await exportTask(t.apiKey, taskId);
    const name = `artifact-bytes/${sha(report)}`;
    const hidden: Files = files.map(([n, b]) => {
      if (n === name) {
        const copy = Buffer.from(b);
        copy[2] = copy[2]! ^ 0x01;
        return [n, new Uint8Array(copy)];
      }
      if (n !== "bundle.json") return [n, b];
      const manifest = JSON.parse(Buffer.from(b).toString("utf8")) as { streams: Record<string, unknown> };
      delete manifest.streams["artifact-bytes"];
      return [n, new Uint8Array(Buffer.from(JSON.stringify(manifest)))];
    });
    const resigned = await verifyBundle(await pack(resign(hidden, signingKeyFromString(inject("signingKeyPem")))));
    expect(resigned.ok).toBe(false);
    expect(resigned.first_failure).toMatchObject({ check: "artifact bytes" });
  });

  it("bytes changed in the store are left out, with the reason, never exported as if intact", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("bundle-bytes");
    const report = Buffer.from("# Report\n\nOriginal.\n");
    await checkpoint(t, taskId, {
      artifacts: [{ ref: "out/report.md", sha256: sha(report), size: report.length }],
    });
    await upload(t, taskId, report);
    await handle.db.execute(
      sql`update artifact_contents set bytes = ${Buffer.from("# Report\n\nAltered.\n")}
          where tenant_id = ${t.tenantId} and sha256 = ${sha(report)}`,
    );
    const files = await exportTask(t.apiKey, taskId);
    expect(files.some(([n]) => n === `artifact-bytes/${sha(report)}`)).toBe(false);
    expect(records(files, "artifact-bytes")).toEqual([
      expect.objectContaining({ sha256: sha(report), included: false, omitted_reason: "changed_in_store" }),
    ]);
    const verified = await verifyBundle(await pack(files));
    expect(verified.ok, JSON.stringify(verified.first_failure)).toBe(true);
  });
});
