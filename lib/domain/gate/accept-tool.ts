/**
 * `POST /api/v1/tasks/{task_id}/tool-definitions/{tool}/accept`: a person accepts a tool's changed definition
 * (docs/concepts.md#tool-definitions, decision 0033). Only this ends a `tool_definition_changed` stop; a runtime's own
 * checkpoint carrying the new digest never does. Approvals given under the old definition stay stale: they need
 * re-approval against the new one.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { appendAuditPending, withAuditSealed } from "../audit/append";
import { actorRef, authorize } from "../authz";
import type { SigningContext } from "../context";
import { DomainError, notFound, validationError } from "../errors";
import { LIMITS } from "../limits";
import { canonicalName, nameProblem } from "../names";
import { checkTaskId } from "../tasks/read";
import { withRetry } from "../tx";
import { readGateFacts } from "./ask";
import { toolDefinitionChanges } from "./tools";

export const acceptToolBodySchema = z.strictObject({
  /** The definition the person reviewed: it must be the one the server last received for the tool. */
  definition_digest: z.string().regex(/^[a-f0-9]{64}$/, "must be a lower-case hex sha256"),
});

/** The answer of an acceptance. */
export type ToolDefinitionAccepted = {
  task_id: string;
  tool: string;
  definition_digest: string;
  previous_digest: string;
  accepted_by: string;
};

/**
 * Accepts the changed definition of one tool of a task, in one transaction holding the task row FOR UPDATE (so no
 * report or intent decides beside it): the accepted row moves by a guarded update, with its audit entry
 * (`tool_definition.accepted`, previous and new digest).
 * @throws DomainError forbidden (a runtime or a role that may not), not_found (task or tool name), validation_failed,
 *   conflict (409: the tool has no changed definition, or the digest sent is not the latest one the server received;
 *   details {tool, accepted_digest, reported_digest}).
 */
export async function acceptToolDefinition(
  { db, actor, signingKey: key }: SigningContext,
  { taskId, tool, body }: { taskId: string; tool: string; body: unknown },
): Promise<ToolDefinitionAccepted> {
  authorize(actor, "tools.accept");
  checkTaskId(taskId);
  if (nameProblem(tool, LIMITS.toolName) !== null) throw notFound(`Tool ${tool}`);
  const input = acceptToolBodySchema.safeParse(body ?? {});
  if (!input.success) throw validationError(input.error.issues);
  const digest = input.data.definition_digest;
  const name = canonicalName(tool);
  const by = actorRef(actor).label;
  return withAuditSealed(db, actor.tenantId, () =>
    withRetry(() =>
      db.transaction(async (tx) => {
        const [task] = await queryRows<{ task_id: string }>(
          tx,
          sql`select task_id from tasks where tenant_id = ${actor.tenantId} and task_id = ${taskId} for update`,
        );
        if (!task) throw notFound(`Task ${taskId}`);
        const read = await readGateFacts(tx, actor.tenantId, taskId, key, { forWrite: true });
        if (!read) throw notFound(`Task ${taskId}`);
        const accepted = read.facts.tool_definitions_accepted ?? [];
        const change = toolDefinitionChanges(accepted, read.facts.tool_definition_reports ?? []).find(
          (c) => c.tool === name,
        );
        if (!change) {
          const held = accepted.find((a) => canonicalName(a.tool) === name);
          throw new DomainError(
            "conflict",
            held
              ? `Tool ${name} has no changed definition to accept: the server holds ${held.digest} and received nothing else since.`
              : `Tool ${name} has no definition on record for this task: nothing to accept.`,
            { tool: name, accepted_digest: held?.digest ?? null, reported_digest: null },
          );
        }
        if (change.reported !== digest) {
          throw new DomainError(
            "conflict",
            `The latest definition the server received for tool ${name} is ${change.reported}, not ${digest}: review that one and accept it.`,
            { tool: name, accepted_digest: change.accepted, reported_digest: change.reported },
          );
        }
        const [moved] = await queryRows<{ previous_digest: string }>(
          tx,
          sql`update task_tool_definitions
              set digest = ${digest}, previous_digest = ${change.accepted}, since = now(), accepted_by = ${by}
              where tenant_id = ${actor.tenantId} and task_id = ${taskId} and tool = ${name} and digest = ${change.accepted}
              returning previous_digest`,
        );
        if (!moved) {
          throw new DomainError("conflict", `Tool ${name}'s definition was accepted by someone else just now.`, {
            tool: name,
            accepted_digest: null,
            reported_digest: change.reported,
          });
        }
        await appendAuditPending(tx, actor, {
          action: "tool_definition.accepted",
          target: `task:${taskId}`,
          details: { tool: name, previous_digest: change.accepted, definition_digest: digest },
        });
        return {
          task_id: taskId,
          tool: name,
          definition_digest: digest,
          previous_digest: change.accepted,
          accepted_by: by,
        };
      }),
    ),
  );
}
