CREATE TABLE "approval_action_rules" (
	"tenant_id" uuid NOT NULL,
	"action" text NOT NULL,
	"requires_approval" boolean DEFAULT true NOT NULL,
	"ttl_seconds" integer,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" text,
	CONSTRAINT "approval_action_rules_pkey" PRIMARY KEY("tenant_id","action")
);
--> statement-breakpoint
CREATE TABLE "approval_requests" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"task_id" text NOT NULL,
	"side_effect" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"principal" text,
	"action" text NOT NULL,
	"tool" text NOT NULL,
	"payload_digest" text,
	"payload" jsonb,
	"input_digest" text NOT NULL,
	"policy_version" text NOT NULL,
	"agent" text,
	"agent_version" text,
	"requested_by_kind" text NOT NULL,
	"requested_by_id" text NOT NULL,
	"requested_by" text NOT NULL,
	"requested_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"origin" text DEFAULT 'intent' NOT NULL,
	"provider_request_id" text,
	"call_id" text,
	"decision" text,
	"reason" text,
	"decided_by_id" text,
	"decided_by" text,
	"decided_at" timestamp (6) with time zone,
	"expires_at" timestamp with time zone,
	"self_approved" boolean DEFAULT false NOT NULL,
	"consumed_at" timestamp (6) with time zone,
	"consumed_attempt" integer,
	"offered_payload_digest" text,
	"offered_payload" jsonb,
	"offered_agent" text,
	"offered_agent_version" text,
	"offered_at" timestamp with time zone,
	"invalidated_reasons" text[] DEFAULT '{}'::text[] NOT NULL,
	"invalidated_at" timestamp with time zone,
	"superseded_by" uuid,
	"supersedes" uuid,
	CONSTRAINT "approval_requests_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "approval_settings" (
	"tenant_id" uuid PRIMARY KEY NOT NULL,
	"policy_version" text DEFAULT '1' NOT NULL,
	"default_ttl_seconds" integer DEFAULT 86400 NOT NULL,
	"allow_self_approval" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" text
);
--> statement-breakpoint
ALTER TABLE "approval_action_rules" ADD CONSTRAINT "approval_action_rules_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD CONSTRAINT "approval_requests_task_fk" FOREIGN KEY ("tenant_id","task_id") REFERENCES "public"."tasks"("tenant_id","task_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_settings" ADD CONSTRAINT "approval_settings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "approval_requests_live_key" ON "approval_requests" USING btree ("tenant_id","task_id","idempotency_key",coalesce("payload_digest", '')) WHERE "approval_requests"."superseded_by" is null;--> statement-breakpoint
CREATE INDEX "approval_requests_queue_idx" ON "approval_requests" USING btree ("tenant_id","requested_at","id");--> statement-breakpoint
CREATE INDEX "approval_requests_task_idx" ON "approval_requests" USING btree ("tenant_id","task_id","side_effect");