ALTER TABLE "side_effects" ADD COLUMN "last_not_applied" jsonb;--> statement-breakpoint
ALTER TABLE "side_effects" ADD COLUMN "repeats" text;--> statement-breakpoint
ALTER TABLE "unapplied_receipts" ADD COLUMN "outcome" text DEFAULT 'applied' NOT NULL;--> statement-breakpoint
ALTER TABLE "unapplied_receipts" ADD COLUMN "error" text;--> statement-breakpoint
ALTER TABLE "approval_settings" ADD COLUMN "retry_after_not_applied_reuses_approval" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "side_effects_payload_idx" ON "side_effects" USING btree ("tenant_id","task_id",lower(regexp_replace("payload_digest", '^sha256:', '', 'i'))) WHERE "side_effects"."payload_digest" is not null;