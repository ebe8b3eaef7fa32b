CREATE TABLE "export_bundles" (
	"tenant_id" uuid NOT NULL,
	"digest" text NOT NULL,
	"scope" text NOT NULL,
	"task_id" text,
	"size_bytes" bigint NOT NULL,
	"verification" jsonb NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "export_bundles_pkey" PRIMARY KEY("tenant_id","digest")
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "read_only_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "imported_from" jsonb;--> statement-breakpoint
CREATE INDEX "export_bundles_tenant_created_idx" ON "export_bundles" USING btree ("tenant_id","created_at" desc);--> statement-breakpoint
-- hand-written: the tenant wall of the new table (decision 0016), and the two scopes a bundle has (decision 0038).
ALTER TABLE "export_bundles" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY tenant_wall ON "export_bundles" TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());--> statement-breakpoint
ALTER TABLE "export_bundles" ADD CONSTRAINT "export_bundles_scope_check" CHECK (scope IN ('task', 'workspace'));
