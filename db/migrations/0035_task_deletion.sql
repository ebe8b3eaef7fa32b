-- hand-written: task deletion (docs/decisions/0054-event-partitions-and-retention.md).
-- The task row stays as a tombstone: when, by whom and why it was deleted, and what went (counts and digests).
ALTER TABLE "tasks" ADD COLUMN "deleted_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "deleted_by" text;
--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "deletion_reason" text;
--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "deletion_summary" jsonb;
--> statement-breakpoint
-- Settings → Retention lists a workspace's tombstones newest first.
CREATE INDEX "tasks_tenant_deleted_idx" ON "tasks" USING btree ("tenant_id","deleted_at" DESC) WHERE "tasks"."deleted_at" is not null;
--> statement-breakpoint
-- A tombstone is never changed again: no stale runtime moves its attempt, phase or record on (SQLSTATE RC410, which
-- the API answers as 410 task_deleted).
CREATE OR REPLACE FUNCTION tasks_tombstone_frozen() RETURNS trigger AS $$
BEGIN
  IF OLD.deleted_at IS NOT NULL THEN
    RAISE EXCEPTION 'task % was deleted', OLD.task_id USING ERRCODE = 'RC410';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER tasks_tombstone_frozen BEFORE UPDATE ON tasks
  FOR EACH ROW EXECUTE FUNCTION tasks_tombstone_frozen();
--> statement-breakpoint
-- Nothing is written again under a deleted task's id (the tables with a foreign key to tasks, and the receipts kept
-- without one). Events are refused by ingest itself (rejected, code task_deleted), one query per batch.
CREATE OR REPLACE FUNCTION refuse_deleted_task_rows() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM tasks t WHERE t.tenant_id = NEW.tenant_id AND t.task_id = NEW.task_id AND t.deleted_at IS NOT NULL) THEN
    RAISE EXCEPTION 'task % was deleted', NEW.task_id USING ERRCODE = 'RC410';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER task_checkpoints_not_deleted BEFORE INSERT ON task_checkpoints
  FOR EACH ROW EXECUTE FUNCTION refuse_deleted_task_rows();
--> statement-breakpoint
CREATE TRIGGER side_effects_not_deleted BEFORE INSERT ON side_effects
  FOR EACH ROW EXECUTE FUNCTION refuse_deleted_task_rows();
--> statement-breakpoint
CREATE TRIGGER side_effect_payloads_not_deleted BEFORE INSERT ON side_effect_payloads
  FOR EACH ROW EXECUTE FUNCTION refuse_deleted_task_rows();
--> statement-breakpoint
CREATE TRIGGER unapplied_receipts_not_deleted BEFORE INSERT ON unapplied_receipts
  FOR EACH ROW EXECUTE FUNCTION refuse_deleted_task_rows();
--> statement-breakpoint
CREATE TRIGGER artifacts_not_deleted BEFORE INSERT ON artifacts
  FOR EACH ROW EXECUTE FUNCTION refuse_deleted_task_rows();
--> statement-breakpoint
CREATE TRIGGER approval_requests_not_deleted BEFORE INSERT ON approval_requests
  FOR EACH ROW EXECUTE FUNCTION refuse_deleted_task_rows();
--> statement-breakpoint
CREATE TRIGGER gate_asks_not_deleted BEFORE INSERT ON gate_asks
  FOR EACH ROW EXECUTE FUNCTION refuse_deleted_task_rows();
--> statement-breakpoint
CREATE TRIGGER task_tool_definitions_not_deleted BEFORE INSERT ON task_tool_definitions
  FOR EACH ROW EXECUTE FUNCTION refuse_deleted_task_rows();
--> statement-breakpoint
CREATE TRIGGER spend_records_not_deleted BEFORE INSERT ON spend_records
  FOR EACH ROW EXECUTE FUNCTION refuse_deleted_task_rows();
--> statement-breakpoint
-- Settings → Retention lists the retention runs (audit entries events.retention_applied) without reading the chain.
CREATE INDEX "audit_log_retention_runs_idx" ON "audit_log" USING btree ("tenant_id","seq" DESC) WHERE "audit_log"."action" = 'events.retention_applied';
