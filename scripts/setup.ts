/**
 * `npm run setup -- --workspace <slug> --name "<name>" --owner <email>`: creates the first workspace and its owner
 * on the configured database — PostgreSQL when `DATABASE_URL` is set, else the embedded PGlite in
 * `CUSTODY_DATA_DIR` (default `.data`; stop the server first, one process per data directory). Safe to run again:
 * an existing workspace is kept, an owner who already is one is left alone, and an owner who has not used their
 * link yet gets a fresh one (the old one stops working).
 *
 * How the owner gets in (no password is stored in clear, nothing secret is written to disk):
 * - default: a one-time link, printed once, that sets the password (valid 7 days);
 * - `CUSTODY_SETUP_PASSWORD`: the account is created with that password (for automation; nothing is printed);
 * - `--generate-password`: a random password, printed once.
 * Options: `--owner-name "<name>"`; `--url <address people open>` (default NEXTAUTH_URL, else
 * http://localhost:$PORT or :3000) for the link.
 * Exit status: 0 done, 2 bad input, 1 anything else (the message says what).
 */
import { parseArgs } from "node:util";
import { openDatabase } from "@/db";
import { isDomainError } from "@/lib/domain/errors";
import { SETUP_COMMAND, setupWorkspace, type SetupResult } from "@/lib/domain/tenancy/setup";

function say(line = "") {
  console.log(line ? `[setup] ${line}` : "");
}

function fail(code: number, message: string): never {
  console.error(`[setup] ${message}`);
  process.exit(code);
}

function dbLabel(url: string | undefined): string {
  if (!url) return `embedded PGlite in ${process.env.CUSTODY_DATA_DIR || ".data"}`;
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return `PostgreSQL ${u.toString()}`;
  } catch {
    return "PostgreSQL (DATABASE_URL)";
  }
}

function report(r: SetupResult, via: "link" | "env" | "generated"): void {
  say(
    `workspace "${r.workspace.slug}" (${r.workspace.name}): ${r.workspace.created ? "created" : "already there, kept as it is"}`,
  );
  switch (r.owner.state) {
    case "already_owner":
      say(`owner ${r.owner.email}: already an owner here; nothing to do.`);
      break;
    case "added":
      say(`owner ${r.owner.email}: an existing account, now owner here. Sign in with its password.`);
      break;
    case "created":
      say(
        via === "generated"
          ? `owner ${r.owner.email}: account created. Its password, shown only now (stored only as an argon2 hash):`
          : `owner ${r.owner.email}: account created with the password from CUSTODY_SETUP_PASSWORD.`,
      );
      if (r.generated_password) console.log(`\n    ${r.generated_password}\n`);
      break;
    case "invited":
      say(
        `owner ${r.owner.email}: open this one-time link to set the password (valid until ${r.expires_at}; shown only now):`,
      );
      console.log(`\n    ${r.invitation_url}\n`);
      say("Lost it? Run the same command again for a new link; the old one then stops working.");
      break;
  }
  say("Next: start the server (npm start), sign in, and create a runtime API key under Settings → Runtime API keys.");
}

async function main() {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        workspace: { type: "string" },
        name: { type: "string" },
        owner: { type: "string" },
        "owner-name": { type: "string" },
        url: { type: "string" },
        "generate-password": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    fail(
      2,
      `${err instanceof Error ? err.message : String(err)}\nUsage: ${SETUP_COMMAND} [--owner-name "<name>"] [--url <address>] [--generate-password]`,
    );
  }
  if (values.help) {
    console.log(`Usage: ${SETUP_COMMAND} [--owner-name "<name>"] [--url <address>] [--generate-password]`);
    return;
  }
  const envPassword = process.env.CUSTODY_SETUP_PASSWORD;
  if (envPassword && values["generate-password"])
    fail(2, "Use either CUSTODY_SETUP_PASSWORD or --generate-password, not both.");
  const via = envPassword ? "env" : values["generate-password"] ? "generated" : "link";
  const baseUrl =
    (values.url as string | undefined) || process.env.NEXTAUTH_URL || `http://localhost:${process.env.PORT || 3000}`;

  const url = process.env.DATABASE_URL || undefined;
  say(`database: ${dbLabel(url)} (applying migrations)`);
  let handle: Awaited<ReturnType<typeof openDatabase>>;
  try {
    handle = await openDatabase({ url, max: 2 });
  } catch (err) {
    fail(1, `cannot open the database: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const result = await setupWorkspace(
      handle.db,
      {
        workspace: values.workspace as string,
        name: values.name as string,
        owner: values.owner as string,
        ...(values["owner-name"] ? { owner_name: values["owner-name"] as string } : {}),
      },
      { password: via === "env" ? envPassword : via === "generated" ? "generate" : undefined, baseUrl },
    );
    report(result, via);
  } catch (err) {
    if (isDomainError(err)) {
      const fields = (err.details as { fields?: Array<{ message: string }> } | undefined)?.fields;
      fail(2, `${fields?.length ? fields.map((f) => f.message).join("; ") : err.message}\nUsage: ${SETUP_COMMAND}`);
    }
    throw err;
  } finally {
    await handle.close();
  }
}

main().catch((err) => {
  console.error("[setup] failed:", err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
