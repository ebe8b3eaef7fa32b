CREATE TABLE "custody_map_comments" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"map_id" uuid NOT NULL,
	"layer" "map_layer" NOT NULL,
	"author" text NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "custody_map_comments_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "custody_map_evidence" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"map_id" uuid NOT NULL,
	"layer" "map_layer" NOT NULL,
	"kind" text NOT NULL,
	"ref" text NOT NULL,
	"note" text DEFAULT '' NOT NULL,
	"added_by" text NOT NULL,
	"added_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "custody_map_evidence_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "custody_map_layers" ADD COLUMN "assignee" text;--> statement-breakpoint
ALTER TABLE "custody_map_versions" ADD COLUMN "last_edited_by" text;--> statement-breakpoint
ALTER TABLE "custody_map_versions" ADD COLUMN "signed_off_by" text;--> statement-breakpoint
ALTER TABLE "custody_map_versions" ADD COLUMN "signed_off_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "custody_map_versions" ADD COLUMN "signoff_note" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "custody_maps" ADD COLUMN "last_edited_by" text;--> statement-breakpoint
ALTER TABLE "custody_maps" ADD COLUMN "archived_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "custody_maps" ADD COLUMN "archived_by" text;--> statement-breakpoint
ALTER TABLE "custody_map_comments" ADD CONSTRAINT "custody_map_comments_map_fk" FOREIGN KEY ("tenant_id","map_id") REFERENCES "public"."custody_maps"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custody_map_evidence" ADD CONSTRAINT "custody_map_evidence_map_fk" FOREIGN KEY ("tenant_id","map_id") REFERENCES "public"."custody_maps"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "custody_map_comments_map_idx" ON "custody_map_comments" USING btree ("tenant_id","map_id","layer","created_at");--> statement-breakpoint
CREATE INDEX "custody_map_evidence_map_idx" ON "custody_map_evidence" USING btree ("tenant_id","map_id","layer","added_at");--> statement-breakpoint
UPDATE "custody_maps" m SET "last_edited_by" = (SELECT l."updated_by" FROM "custody_map_layers" l WHERE l."tenant_id" = m."tenant_id" AND l."map_id" = m."id" ORDER BY l."updated_at" DESC LIMIT 1);--> statement-breakpoint
UPDATE "custody_map_versions" SET "last_edited_by" = "published_by" WHERE "last_edited_by" IS NULL;
--> statement-breakpoint
-- hand-written:
-- Tenant walls (decision 0016) on the map's comments and evidence items (decision 0046).
ALTER TABLE custody_map_comments ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON custody_map_comments TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
ALTER TABLE custody_map_evidence ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON custody_map_evidence TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
