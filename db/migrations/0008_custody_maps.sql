CREATE TYPE "public"."map_decision" AS ENUM('accept', 'constrain', 'request_evidence');--> statement-breakpoint
CREATE TYPE "public"."exercise_outcome" AS ENUM('safe_resume', 'safe_replay', 'visible_stop', 'unsafe');--> statement-breakpoint
CREATE TYPE "public"."exercise_status" AS ENUM('in_progress', 'completed');--> statement-breakpoint
CREATE TYPE "public"."map_layer" AS ENUM('session_state', 'compaction', 'tools', 'compute', 'credentials', 'artifacts', 'recovery', 'export');--> statement-breakpoint
CREATE TYPE "public"."map_status" AS ENUM('draft', 'published');--> statement-breakpoint
CREATE TYPE "public"."map_verification" AS ENUM('unknown', 'verified', 'failed');--> statement-breakpoint
CREATE TABLE "custody_exercises" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"map_id" uuid NOT NULL,
	"interruption_point" text NOT NULL,
	"layers" jsonb NOT NULL,
	"steps" jsonb NOT NULL,
	"status" "exercise_status" DEFAULT 'in_progress' NOT NULL,
	"outcome" "exercise_outcome",
	"finding" text DEFAULT '' NOT NULL,
	"revision" integer DEFAULT 1 NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	"completed_map_version" integer,
	CONSTRAINT "custody_exercises_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "custody_map_layers" (
	"tenant_id" uuid NOT NULL,
	"map_id" uuid NOT NULL,
	"layer" "map_layer" NOT NULL,
	"position" smallint NOT NULL,
	"custodians" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"handoff" text DEFAULT '' NOT NULL,
	"evidence" text DEFAULT '' NOT NULL,
	"recovery_path" text DEFAULT '' NOT NULL,
	"acceptance_question" text DEFAULT '' NOT NULL,
	"verification" "map_verification" DEFAULT 'unknown' NOT NULL,
	"verification_evidence" jsonb,
	"decision" "map_decision",
	"decision_note" text DEFAULT '' NOT NULL,
	"revision" integer DEFAULT 1 NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "custody_map_layers_pkey" PRIMARY KEY("tenant_id","map_id","layer")
);
--> statement-breakpoint
CREATE TABLE "custody_map_versions" (
	"tenant_id" uuid NOT NULL,
	"map_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"snapshot" jsonb NOT NULL,
	"published_by" text NOT NULL,
	"published_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "custody_map_versions_pkey" PRIMARY KEY("tenant_id","map_id","version")
);
--> statement-breakpoint
CREATE TABLE "custody_maps" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"workflow" text NOT NULL,
	"title" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"status" "map_status" DEFAULT 'draft' NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "custody_maps_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "custody_exercises" ADD CONSTRAINT "custody_exercises_map_fk" FOREIGN KEY ("tenant_id","map_id") REFERENCES "public"."custody_maps"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custody_map_layers" ADD CONSTRAINT "custody_map_layers_map_fk" FOREIGN KEY ("tenant_id","map_id") REFERENCES "public"."custody_maps"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custody_map_versions" ADD CONSTRAINT "custody_map_versions_map_fk" FOREIGN KEY ("tenant_id","map_id") REFERENCES "public"."custody_maps"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custody_maps" ADD CONSTRAINT "custody_maps_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "custody_exercises_tenant_map_idx" ON "custody_exercises" USING btree ("tenant_id","map_id","created_at" desc);--> statement-breakpoint
CREATE INDEX "custody_maps_tenant_workflow_idx" ON "custody_maps" USING btree ("tenant_id","workflow","updated_at" desc);