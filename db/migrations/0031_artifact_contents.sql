CREATE TABLE "artifact_contents" (
	"tenant_id" uuid NOT NULL,
	"sha256" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"bytes" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "artifact_contents_pkey" PRIMARY KEY("tenant_id","sha256")
);
--> statement-breakpoint
CREATE TABLE "side_effect_payloads" (
	"tenant_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"name" text NOT NULL,
	"payload_digest" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "side_effect_payloads_pkey" PRIMARY KEY("tenant_id","task_id","name","payload_digest")
);
--> statement-breakpoint
ALTER TABLE "artifact_contents" ADD CONSTRAINT "artifact_contents_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "side_effect_payloads" ADD CONSTRAINT "side_effect_payloads_task_fk" FOREIGN KEY ("tenant_id","task_id") REFERENCES "public"."tasks"("tenant_id","task_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- hand-written:
-- Tenant walls (decision 0016) on artifact bytes and intent payloads (decision 0045).
ALTER TABLE artifact_contents ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON artifact_contents TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
ALTER TABLE side_effect_payloads ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON side_effect_payloads TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
