CREATE TABLE "gate_asks" (
	"tenant_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"asks" integer DEFAULT 1 NOT NULL,
	"first_asked_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_asked_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_verdict" text NOT NULL,
	CONSTRAINT "gate_asks_pkey" PRIMARY KEY("tenant_id","task_id","attempt")
);
--> statement-breakpoint
ALTER TABLE "gate_asks" ADD CONSTRAINT "gate_asks_task_fk" FOREIGN KEY ("tenant_id","task_id") REFERENCES "public"."tasks"("tenant_id","task_id") ON DELETE no action ON UPDATE no action;