CREATE TABLE "retention_settings" (
	"tenant_id" uuid NOT NULL,
	"event_retention_days" integer,
	"export_before_delete" boolean DEFAULT false NOT NULL,
	"updated_by" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "retention_settings_pkey" PRIMARY KEY("tenant_id"),
	CONSTRAINT "retention_settings_days_check" CHECK ("retention_settings"."event_retention_days" is null or "retention_settings"."event_retention_days" between 1 and 36500)
);
--> statement-breakpoint
-- hand-written:
-- Tenant wall (decision 0016).
ALTER TABLE retention_settings ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON retention_settings TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
