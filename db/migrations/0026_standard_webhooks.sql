CREATE TABLE "notification_deliveries" (
	"tenant_id" uuid NOT NULL,
	"id" text NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"event" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer DEFAULT 8 NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	CONSTRAINT "notification_deliveries_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "notification_endpoints" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"url" text NOT NULL,
	"events" text[] NOT NULL,
	"format" text NOT NULL,
	"sealed_secret" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notification_endpoints_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "notification_settings" (
	"tenant_id" uuid PRIMARY KEY NOT NULL,
	"allow_private_addresses" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_messages" (
	"tenant_id" uuid NOT NULL,
	"source" text NOT NULL,
	"webhook_id" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"task_id" text,
	"side_effect" text,
	"idempotency_key" text NOT NULL,
	"external_operation_id" text,
	"outcome" text NOT NULL,
	"result_digest" text,
	"disposition" text NOT NULL,
	"audit_seq" integer,
	CONSTRAINT "webhook_messages_pkey" PRIMARY KEY("tenant_id","source","webhook_id")
);
--> statement-breakpoint
CREATE TABLE "webhook_source_secrets" (
	"tenant_id" uuid NOT NULL,
	"source" text NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_source_secrets_pkey" PRIMARY KEY("tenant_id","source","id")
);
--> statement-breakpoint
CREATE TABLE "webhook_sources" (
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"trusted_actions" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_sources_pkey" PRIMARY KEY("tenant_id","name")
);
--> statement-breakpoint
CREATE INDEX "notification_deliveries_due_idx" ON "notification_deliveries" USING btree ("next_attempt_at") WHERE "notification_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "notification_deliveries_endpoint_idx" ON "notification_deliveries" USING btree ("tenant_id","endpoint_id","created_at" desc);--> statement-breakpoint
CREATE INDEX "webhook_messages_key_idx" ON "webhook_messages" USING btree ("tenant_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "webhook_sources_name_idx" ON "webhook_sources" USING btree ("name");--> statement-breakpoint
-- hand-written:
-- Tenant walls (decision 0016) on the webhook and notification tables (decision 0040).
ALTER TABLE webhook_sources ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON webhook_sources TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
ALTER TABLE webhook_source_secrets ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON webhook_source_secrets TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
ALTER TABLE webhook_messages ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON webhook_messages TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
ALTER TABLE notification_endpoints ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON notification_endpoints TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
ALTER TABLE notification_settings ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON notification_settings TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
ALTER TABLE notification_deliveries ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON notification_deliveries TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
