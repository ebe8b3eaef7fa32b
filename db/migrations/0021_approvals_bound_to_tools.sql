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
ALTER TABLE "task_tool_definitions" ADD CONSTRAINT "task_tool_definitions_task_fk" FOREIGN KEY ("tenant_id","task_id") REFERENCES "public"."tasks"("tenant_id","task_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- hand-written:
-- Tenant wall (decision 0016) on the accepted tool definitions.
ALTER TABLE task_tool_definitions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON task_tool_definitions TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
