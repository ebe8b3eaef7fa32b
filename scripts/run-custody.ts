/**
 * `npx run-custody verify <bundle.tar.gz> [--key <jwks.json>] [--json]` (docs/decisions/0037-evidence-bundles.md):
 * checks an evidence bundle offline — no server, no database, no network, no file written — and prints one line per
 * check and the first failure (file, record, field). Exit 0 when every check passes, 1 otherwise (bad input included),
 * 2 on a usage error.
 */
import fs from "node:fs";
import { Readable } from "node:stream";
import { formatReport, verifyBundle, type VerifyReport } from "@/lib/export/verify";

const USAGE = "usage: run-custody verify <bundle.tar.gz> [--key <jwks.json>] [--json]";

function fail(message: string, json: boolean, code = 1): never {
  if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: message })}\n`);
  else process.stderr.write(`run-custody: ${message}\n`);
  process.exit(code);
}

async function main(argv: string[]): Promise<void> {
  const json = argv.includes("--json");
  const args = argv.filter((a) => a !== "--json");
  if (args[0] !== "verify") fail(USAGE, json, 2);
  let file: string | undefined;
  let keyFile: string | undefined;
  for (let i = 1; i < args.length; i++) {
    if (args[i] === "--key")
      keyFile = args[++i] ?? fail("--key needs a file (a JWK Set from GET /api/v1/signing-keys)", json, 2);
    else if (args[i]!.startsWith("--")) fail(`unknown option ${args[i]}\n${USAGE}`, json, 2);
    else if (file === undefined) file = args[i];
    else fail(USAGE, json, 2);
  }
  if (!file) fail(USAGE, json, 2);
  let pinnedKeys: unknown;
  if (keyFile !== undefined) {
    try {
      pinnedKeys = JSON.parse(fs.readFileSync(keyFile, "utf8"));
    } catch (err) {
      fail(`cannot read the key set ${keyFile}: ${err instanceof Error ? err.message : String(err)}`, json);
    }
  }
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    fail(`cannot read ${file}: no such file`, json);
  }
  if (!stat.isFile()) fail(`${file} is not a file`, json);
  const stream = Readable.toWeb(fs.createReadStream(file)) as ReadableStream<Uint8Array>;
  const report: VerifyReport = await verifyBundle(stream, { pinnedKeys });
  process.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
  process.exit(report.ok ? 0 : 1);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  fail(`could not verify: ${err instanceof Error ? err.message : String(err)}`, process.argv.includes("--json"));
});
