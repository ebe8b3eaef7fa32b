CREATE TABLE "spend_records" (
	"tenant_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"side_effect" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"principal" text NOT NULL,
	"action" text NOT NULL,
	"amount" double precision NOT NULL,
	"currency" text NOT NULL,
	"spent_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "spend_records_pkey" PRIMARY KEY("tenant_id","task_id","side_effect","idempotency_key")
);
--> statement-breakpoint
CREATE TABLE "task_tool_definitions" (
	"tenant_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"tool" text NOT NULL,
	"digest" text NOT NULL,
	"since" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"previous_digest" text,
	"accepted_by" text,
	CONSTRAINT "task_tool_definitions_pkey" PRIMARY KEY("tenant_id","task_id","tool")
);
--> statement-breakpoint
ALTER TABLE "approval_requests" ADD COLUMN "tool_definition_digest" text;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD COLUMN "destination_hosts" text[];--> statement-breakpoint
ALTER TABLE "approval_requests" ADD COLUMN "input_classification" text;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD COLUMN "amount" double precision;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD COLUMN "currency" text;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD COLUMN "offered_amount" double precision;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD COLUMN "offered_currency" text;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD COLUMN "offered_destination_hosts" text[];--> statement-breakpoint
ALTER TABLE "spend_records" ADD CONSTRAINT "spend_records_task_fk" FOREIGN KEY ("tenant_id","task_id") REFERENCES "public"."tasks"("tenant_id","task_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_tool_definitions" ADD CONSTRAINT "task_tool_definitions_task_fk" FOREIGN KEY ("tenant_id","task_id") REFERENCES "public"."tasks"("tenant_id","task_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "spend_records_principal_idx" ON "spend_records" USING btree ("tenant_id","principal","action","currency","spent_at");--> statement-breakpoint
-- hand-written:
-- Tenant wall (decision 0016) on the accepted tool definitions.
ALTER TABLE task_tool_definitions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON task_tool_definitions TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
-- Approval rules keep their action in the canonical form every lookup uses (decision 0033: lower case). Where a
-- workspace had rules for two spellings of one action, the one that requires approval is kept.
DELETE FROM approval_action_rules a USING approval_action_rules b
  WHERE b.tenant_id = a.tenant_id AND lower(b.action) = lower(a.action) AND b.action <> a.action
    AND (b.requires_approval, b.action) > (a.requires_approval, a.action);
--> statement-breakpoint
UPDATE approval_action_rules SET action = lower(action) WHERE action <> lower(action);
--> statement-breakpoint
ALTER TABLE spend_records ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON spend_records TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
