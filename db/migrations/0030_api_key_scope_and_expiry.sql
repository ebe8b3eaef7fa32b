CREATE TYPE "public"."api_key_scope" AS ENUM('full', 'runtime', 'read_only', 'task_prefix');--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "scope" "api_key_scope" DEFAULT 'full' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "task_prefix" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_task_prefix_check" CHECK (("api_keys"."scope" = 'task_prefix') = ("api_keys"."task_prefix" is not null and length("api_keys"."task_prefix") between 1 and 100));