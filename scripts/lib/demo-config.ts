/**
 * Demo settings and the secrets the demo keeps in its data directory (mode 0600): the generated password,
 * runtime API key and next-auth secret. Nothing here reaches the database except hashes.
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";

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
  saveDemoSecrets(dir, secrets);
  return secrets;
}

/** Writes the demo secrets file with mode 0600. */
export function saveDemoSecrets(dir: string, secrets: DemoSecrets): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "demo-secrets.json");
  fs.writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}
