CREATE TABLE "policy_versions" (
	"tenant_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"document" jsonb,
	"source_text" text NOT NULL,
	"source_format" text NOT NULL,
	"digest" text NOT NULL,
	"findings" jsonb NOT NULL,
	"valid" boolean NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"activated_at" timestamp with time zone,
	"activated_by" text,
	CONSTRAINT "policy_versions_pkey" PRIMARY KEY("tenant_id","version")
);
--> statement-breakpoint
ALTER TABLE "policy_versions" ADD CONSTRAINT "policy_versions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "policy_versions_tenant_digest_idx" ON "policy_versions" USING btree ("tenant_id","digest");--> statement-breakpoint
CREATE INDEX "policy_versions_tenant_activated_idx" ON "policy_versions" USING btree ("tenant_id","activated_at" desc nulls last);--> statement-breakpoint
CREATE INDEX "events_tenant_credential_ref_idx" ON "events" USING btree ("tenant_id",("attrs" ->> 'credential_ref'),"task_id") WHERE ("events"."attrs" ->> 'credential_ref') is not null;