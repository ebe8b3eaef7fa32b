ALTER TABLE "tasks" ADD COLUMN "workflow" text;--> statement-breakpoint
-- Backfill (decision 0049): each task's workflow is `attrs.workflow` of its first `task.created` event (receive order)
-- that names one of 1–200 characters without surrounding whitespace; db/queries/tasks.ts fillTaskWorkflows is the same rule.
UPDATE "tasks" t SET "workflow" = w.workflow
FROM (
  SELECT DISTINCT ON (e.tenant_id, e.task_id) e.tenant_id, e.task_id, e.attrs ->> 'workflow' AS workflow
  FROM "events" e
  WHERE e.type = 'task.created' AND jsonb_typeof(e.attrs -> 'workflow') = 'string'
    AND char_length(e.attrs ->> 'workflow') BETWEEN 1 AND 200 AND btrim(e.attrs ->> 'workflow') = e.attrs ->> 'workflow'
  ORDER BY e.tenant_id, e.task_id, e.seq
) w
WHERE t.tenant_id = w.tenant_id AND t.task_id = w.task_id AND t.workflow IS NULL;--> statement-breakpoint
CREATE INDEX "tasks_tenant_workflow_idx" ON "tasks" USING btree ("tenant_id","workflow","created_at" desc,"task_id" desc);
