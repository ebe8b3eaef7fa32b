/**
 * The session-signing secret for next-auth: `NEXTAUTH_SECRET`, or on the embedded database a random one kept
 * in `<CUSTODY_DATA_DIR>/nextauth-secret` (mode 0600), so `npm start` works without set-up.
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { dataDir } from "@/db/paths";
import { createFileOnce } from "./files";

/** @throws Error when `DATABASE_URL` is set but `NEXTAUTH_SECRET` is not. */
export function authSecret(): string {
  const env = process.env.NEXTAUTH_SECRET;
  if (env) return env;
  if (process.env.DATABASE_URL) {
    throw new Error("NEXTAUTH_SECRET is not set; set the same random value (32+ bytes) on every server.");
  }
  const file = path.join(/*turbopackIgnore: true*/ dataDir(), "nextauth-secret");
  if (fs.existsSync(file)) return fs.readFileSync(file, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  // Created whole or not at all (a kill mid-write must not leave an empty secret); another process may win the race.
  if (createFileOnce(file, secret)) return secret;
  return fs.readFileSync(file, "utf8").trim();
}
