CREATE TABLE "unapplied_receipts" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"task_id" text NOT NULL,
	"name" text NOT NULL,
	"idempotency_key" text,
	"source" text NOT NULL,
	"event_id" text,
	"attempt" integer,
	"external_operation_id" text,
	"result_digest" text,
	"completed_at" timestamp (6) with time zone,
	"reason" text NOT NULL,
	"message" text NOT NULL,
	"received_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"applied_at" timestamp with time zone,
	CONSTRAINT "unapplied_receipts_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "seq" bigint NOT NULL GENERATED ALWAYS AS IDENTITY (sequence name "events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1);--> statement-breakpoint
ALTER TABLE "side_effects" ADD COLUMN "origin" text DEFAULT 'intent' NOT NULL;--> statement-breakpoint
ALTER TABLE "side_effects" ADD COLUMN "call_id" text;--> statement-breakpoint
ALTER TABLE "task_checkpoints" ADD COLUMN "attempt" integer;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "clock_skew_ms" bigint;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "clock_skew_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "clock_skew_note" text;--> statement-breakpoint
CREATE INDEX "unapplied_receipts_effect_idx" ON "unapplied_receipts" USING btree ("tenant_id","task_id","name");--> statement-breakpoint
CREATE INDEX "events_task_facts_idx" ON "events" USING btree ("tenant_id","task_id","type","seq") WHERE "events"."type" in ('sandbox.created', 'sandbox.replaced', 'sandbox.destroyed', 'snapshot.saved', 'snapshot.restored', 'credential.issued', 'credential.revoked', 'credential.expired', 'tool.definition_changed', 'run.interrupted', 'run.resumed', 'run.stopped');--> statement-breakpoint
CREATE INDEX "side_effects_tool_call_idx" ON "side_effects" USING btree ("tenant_id","task_id","call_id") WHERE "side_effects"."origin" = 'tool_call';--> statement-breakpoint
-- Principals compare as people read them (Unicode NFC): normalize what is stored. A revocation whose normalized form
-- is already revoked is redundant and goes.
UPDATE "tasks" SET "principal" = normalize("principal", NFC) WHERE "principal" IS NOT NULL AND "principal" <> normalize("principal", NFC);--> statement-breakpoint
DELETE FROM "principal_revocations" r WHERE r."principal" <> normalize(r."principal", NFC)
  AND EXISTS (SELECT 1 FROM "principal_revocations" n WHERE n."tenant_id" = r."tenant_id" AND n."principal" = normalize(r."principal", NFC));--> statement-breakpoint
UPDATE "principal_revocations" SET "principal" = normalize("principal", NFC) WHERE "principal" <> normalize("principal", NFC);
