ALTER TABLE "tasks" ADD COLUMN "terminated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "terminated_by" text;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "terminated_reason" text;