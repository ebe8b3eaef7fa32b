/**
 * Demo settings and the secrets the demo keeps in its data directory (mode 0600): the generated password,
 * runtime API key and next-auth secret. Nothing here reaches the database except hashes.
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { writeFileAtomic } from "@/lib/config/files";

export const DEMO_TENANT_SLUG = "demo";
export const DEMO_TENANT_NAME = "Demo workspace";
export const DEMO_USERS = [
  { email: "owner@demo.test", name: "Olive Owner", role: "owner" },
  { email: "approver@demo.test", name: "Ari Approver", role: "approver" },
  { email: "responder@demo.test", name: "Rae Responder", role: "responder" },
  { email: "viewer@demo.test", name: "Vic Viewer", role: "viewer" },
] as const;

export type DemoSecrets = { password: string; apiKey?: string; nextauthSecret: string };

/** Reads `<dir>/demo-secrets.json`, filling and saving what is missing. */
export function loadDemoSecrets(dir: string): DemoSecrets {
  const file = path.join(dir, "demo-secrets.json");
  let saved: Partial<DemoSecrets> = {};
  if (fs.existsSync(file)) saved = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<DemoSecrets>;
  const secrets: DemoSecrets = {
    password: saved.password ?? randomBytes(9).toString("base64url"),
    apiKey: saved.apiKey,
    nextauthSecret: saved.nextauthSecret ?? randomBytes(32).toString("base64url"),
  };
  if (
    JSON.stringify(secrets) !==
    JSON.stringify({ password: saved.password, apiKey: saved.apiKey, nextauthSecret: saved.nextauthSecret })
  ) {
    saveDemoSecrets(dir, secrets);
  }
  return secrets;
}

/**
 * Writes the demo secrets file with mode 0600, atomically: a demo killed mid-write leaves the previous file or the new
 * one, never a torn one the next start could not read.
 */
export function saveDemoSecrets(dir: string, secrets: DemoSecrets): void {
  writeFileAtomic(path.join(dir, "demo-secrets.json"), JSON.stringify(secrets, null, 2));
}
