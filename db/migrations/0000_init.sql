CREATE TYPE "public"."actor_kind" AS ENUM('user', 'api_key', 'system');--> statement-breakpoint
CREATE TYPE "public"."event_plane" AS ENUM('session', 'environment', 'tools', 'vault');--> statement-breakpoint
CREATE TYPE "public"."membership_role" AS ENUM('owner', 'approver', 'responder', 'viewer', 'admin');--> statement-breakpoint
CREATE TYPE "public"."side_effect_status" AS ENUM('not_started', 'awaiting_approval', 'approved', 'in_flight', 'completed', 'failed', 'unknown');--> statement-breakpoint
CREATE TABLE "api_keys" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"display_prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"tenant_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"role" "membership_role" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "memberships_pkey" PRIMARY KEY("tenant_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "artifacts" (
	"tenant_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"object_ref" text NOT NULL,
	"sha256" text NOT NULL,
	"size_bytes" bigint,
	"media_type" text,
	"first_version" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "artifacts_pkey" PRIMARY KEY("tenant_id","task_id","object_ref","sha256")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"tenant_id" uuid NOT NULL,
	"event_id" text NOT NULL,
	"task_id" text NOT NULL,
	"plane" "event_plane" NOT NULL,
	"type" text NOT NULL,
	"occurred_at" timestamp (6) with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"environment_id" text,
	"attempt" integer,
	"actor" text,
	"attrs" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"redaction_count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "events_pkey" PRIMARY KEY("tenant_id","event_id")
);
--> statement-breakpoint
CREATE TABLE "side_effects" (
	"tenant_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"name" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"status" "side_effect_status" DEFAULT 'not_started' NOT NULL,
	"tool" text,
	"action" text,
	"mutation" boolean DEFAULT true NOT NULL,
	"payload_digest" text,
	"intent_at" timestamp (6) with time zone,
	"intent_attempt" integer,
	"lease_expires_at" timestamp with time zone,
	"receipt" jsonb,
	"last_reconcile" jsonb,
	"status_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "side_effects_pkey" PRIMARY KEY("tenant_id","task_id","name")
);
--> statement-breakpoint
CREATE TABLE "task_checkpoints" (
	"tenant_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"version" integer NOT NULL,
	"record" jsonb NOT NULL,
	"digest" text NOT NULL,
	"signature" text NOT NULL,
	"key_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "task_checkpoints_pkey" PRIMARY KEY("tenant_id","task_id","version")
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"tenant_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"principal" text,
	"policy_version" text,
	"phase" text DEFAULT 'unknown' NOT NULL,
	"latest_version" integer DEFAULT 0 NOT NULL,
	"current_attempt" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tasks_pkey" PRIMARY KEY("tenant_id","task_id")
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"tenant_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"actor_kind" "actor_kind" NOT NULL,
	"actor_id" text NOT NULL,
	"actor_label" text NOT NULL,
	"action" text NOT NULL,
	"target" text NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	CONSTRAINT "audit_log_pkey" PRIMARY KEY("tenant_id","seq")
);
--> statement-breakpoint
CREATE TABLE "principal_revocations" (
	"tenant_id" uuid NOT NULL,
	"principal" text NOT NULL,
	"reason" text NOT NULL,
	"revoked_by" text NOT NULL,
	"revoked_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "principal_revocations_pkey" PRIMARY KEY("tenant_id","principal")
);
--> statement-breakpoint
CREATE TABLE "tool_lookups" (
	"tenant_id" uuid NOT NULL,
	"tool" text NOT NULL,
	"url" text NOT NULL,
	"timeout_ms" integer DEFAULT 3000 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tool_lookups_pkey" PRIMARY KEY("tenant_id","tool")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_task_fk" FOREIGN KEY ("tenant_id","task_id") REFERENCES "public"."tasks"("tenant_id","task_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "side_effects" ADD CONSTRAINT "side_effects_task_fk" FOREIGN KEY ("tenant_id","task_id") REFERENCES "public"."tasks"("tenant_id","task_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_checkpoints" ADD CONSTRAINT "task_checkpoints_task_fk" FOREIGN KEY ("tenant_id","task_id") REFERENCES "public"."tasks"("tenant_id","task_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_tenant_created_idx" ON "api_keys" USING btree ("tenant_id","created_at" desc);--> statement-breakpoint
CREATE INDEX "memberships_user_idx" ON "memberships" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "tenants_slug_key" ON "tenants" USING btree ("slug");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_key" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "events_timeline_idx" ON "events" USING btree ("tenant_id","task_id","occurred_at","event_id");--> statement-breakpoint
CREATE UNIQUE INDEX "side_effects_tenant_key_key" ON "side_effects" USING btree ("tenant_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "side_effects_tenant_status_idx" ON "side_effects" USING btree ("tenant_id","status");--> statement-breakpoint
CREATE INDEX "tasks_tenant_created_idx" ON "tasks" USING btree ("tenant_id","created_at" desc,"task_id" desc);--> statement-breakpoint
CREATE INDEX "audit_log_tenant_target_idx" ON "audit_log" USING btree ("tenant_id","target");