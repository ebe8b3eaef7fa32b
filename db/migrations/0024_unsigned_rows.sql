ALTER TABLE "task_checkpoints" ADD COLUMN "signature_format" smallint DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "task_checkpoints" ADD COLUMN "binding_signature" text;