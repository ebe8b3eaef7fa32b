/**
 * Lookup endpoints per tool (docs/concepts.md#reconcile): owners and admins register where the
 * server may ask whether a write with a given idempotency key happened.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { appendAudit } from "../audit/append";
import { authorize } from "../authz";
import { notFound, validationError } from "../errors";
import { redactString } from "../events/redact";
import { checkTypedText, UNSAFE_TEXT, unsafeTextReason } from "../typed-text";
import type { VerbContext } from "../context";

export const TOOL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

export const lookupBodySchema = z.strictObject({
  url: z
    .url({ message: "url must be an absolute http(s) URL" })
    .max(2000)
    .refine((u) => /^https?:\/\//i.test(u), "url must start with http:// or https://")
    .refine((u) => {
      try {
        const parsed = new URL(u);
        return !parsed.username && !parsed.password;
      } catch {
        return true; // not a URL at all: the url check above already reports it
      }
    }, "url must not carry credentials")
    .refine((u) => !UNSAFE_TEXT.test(u), {
      error: (iss) => `url ${unsafeTextReason(String(iss.input)) ?? "contains a character that cannot be shown"}`,
    })
    .refine(
      (u) =>
        redactString(u).kinds.length === 0 && !/[?&](token|key|api_key|apikey|secret|password|access_token)=/i.test(u),
      {
        message:
          "url must not carry a credential (the lookup is called without secrets; put it behind a proxy that adds them)",
      },
    ),
  timeout_ms: z
    .number()
    .int()
    .min(100, "timeout_ms is at least 100")
    .max(30_000, "timeout_ms is at most 30000")
    .default(3000),
});

export type LookupView = { tool: string; url: string; timeout_ms: number; updated_at: string };

/** Registered lookups of the tenant. @throws DomainError forbidden */
export async function listLookups({ db, actor }: VerbContext): Promise<LookupView[]> {
  authorize(actor, "settings.read");
  return queryRows<LookupView>(
    db,
    sql`select tool, url, timeout_ms, ${isoUtc("updated_at")} as updated_at from tool_lookups
        where tenant_id = ${actor.tenantId} order by tool`,
  );
}

/**
 * Creates or replaces the lookup of a tool.
 * @throws DomainError forbidden, validation_failed (tool name, url, timeout_ms).
 */
export async function upsertLookup(
  { db, actor }: VerbContext,
  { tool, body }: { tool: string; body: unknown },
): Promise<LookupView> {
  authorize(actor, "lookups.manage");
  const typed = checkTypedText("tool", tool, { max: 200 });
  if (!typed.ok) throw validationError([{ path: ["tool"], message: typed.message }]);
  if (!TOOL_NAME.test(tool)) {
    throw validationError([
      {
        path: ["tool"],
        message: "tool names are 1–200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
      },
    ]);
  }
  const parsed = lookupBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  return db.transaction(async (tx) => {
    const [row] = await queryRows<LookupView>(
      tx,
      sql`insert into tool_lookups (tenant_id, tool, url, timeout_ms) values (${actor.tenantId}, ${tool}, ${parsed.data.url}, ${parsed.data.timeout_ms})
          on conflict (tenant_id, tool) do update set url = excluded.url, timeout_ms = excluded.timeout_ms, updated_at = now()
          returning tool, url, timeout_ms, ${isoUtc("updated_at")} as updated_at`,
    );
    await appendAudit(tx, actor, {
      action: "lookup.saved",
      target: `tool:${tool}`,
      details: { url: parsed.data.url, timeout_ms: parsed.data.timeout_ms },
    });
    return row!;
  });
}

/** Removes the lookup of a tool. @throws DomainError forbidden, not_found */
export async function deleteLookup({ db, actor }: VerbContext, { tool }: { tool: string }): Promise<void> {
  authorize(actor, "lookups.manage");
  await db.transaction(async (tx) => {
    const rows = await queryRows(
      tx,
      sql`delete from tool_lookups where tenant_id = ${actor.tenantId} and tool = ${tool} returning tool`,
    );
    if (!rows.length) throw notFound(`Lookup for tool ${tool}`);
    await appendAudit(tx, actor, { action: "lookup.deleted", target: `tool:${tool}` });
  });
}
