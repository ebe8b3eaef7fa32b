-- Event partitions (docs/decisions/0054-event-partitions-and-retention.md). Hand-written: drizzle-kit does not model
-- partitioned tables; db/schema/tasks.ts describes the parent table's columns and indexes.
--
-- events (partitioned by retention_class)
--   events_facts      'fact': what the custody rules judge a task by (sandbox, snapshot and credential lifecycle,
--                     egress, tool definitions, interruptions, approvals, …), and history moved here because its
--                     task had not ended when its month was dropped. Kept for as long as the task.
--   events_history    'history': the tool traffic (calls, outcomes, credential uses, phases, …), partitioned by
--                     received_at in calendar months (UTC) events_history_YYYY_MM, plus events_history_default for
--                     rows no month covers yet. Retention drops whole months.
-- event_ids           every event id a workspace has stored: the exactly-once check, kept when the event itself is
--                     dropped, so an id seen in a dropped month is still a duplicate.

-- 1. The ids, with their own key (a partitioned table cannot hold a unique index across partitions).
CREATE TABLE "event_ids" (
	"tenant_id" uuid NOT NULL,
	"event_id" text NOT NULL,
	CONSTRAINT "event_ids_pkey" PRIMARY KEY("tenant_id","event_id")
);
--> statement-breakpoint
INSERT INTO "event_ids" ("tenant_id", "event_id") SELECT "tenant_id", "event_id" FROM "events";
--> statement-breakpoint
ALTER TABLE "event_ids" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON "event_ids" TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint

-- 2. Which partition an event type belongs to. The list is HISTORY_TYPES of lib/domain/events/catalogue.ts (a unit
-- test holds them equal); custom types (`x.…`) are history too. IMMUTABLE SQL, so it is inlined into the insert.
CREATE FUNCTION custody_event_retention_class(event_type text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN event_type IN ('phase.changed', 'checkpoint.saved', 'decision.recorded', 'manifest.applied',
                                   'tool.called', 'tool.completed', 'tool.failed', 'side_effect.intent',
                                   'side_effect.receipt', 'credential.used', 'credential.denied')
                 OR event_type LIKE 'x.%'
               THEN 'history' ELSE 'fact' END $$;
--> statement-breakpoint

-- 3. The partitioned table beside the old one.
DROP INDEX IF EXISTS "events_timeline_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "events_task_arrival_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "events_tenant_environment_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "events_tenant_host_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "events_tenant_credential_ref_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "events_task_facts_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "events_task_egress_idx";
--> statement-breakpoint
ALTER TABLE "events" RENAME TO "events_unpartitioned";
--> statement-breakpoint
ALTER TABLE "events_unpartitioned" RENAME CONSTRAINT "events_pkey" TO "events_unpartitioned_pkey";
--> statement-breakpoint
ALTER SEQUENCE "events_seq_seq" RENAME TO "events_unpartitioned_seq_seq";
--> statement-breakpoint
CREATE TABLE "events" (
	"tenant_id" uuid NOT NULL,
	"event_id" text NOT NULL,
	"task_id" text NOT NULL,
	"plane" "event_plane" NOT NULL,
	"type" text NOT NULL,
	"occurred_at" timestamp (6) with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "events_seq_seq"),
	"txid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"environment_id" text,
	"attempt" integer,
	"actor" text,
	"attrs" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"redaction_count" integer DEFAULT 0 NOT NULL,
	"redaction_kinds" text[],
	"retention_class" text NOT NULL,
	CONSTRAINT "events_retention_class_check" CHECK ("retention_class" IN ('fact', 'history'))
) PARTITION BY LIST ("retention_class");
--> statement-breakpoint
CREATE TABLE "events_facts" PARTITION OF "events" FOR VALUES IN ('fact');
--> statement-breakpoint
CREATE TABLE "events_history" PARTITION OF "events" FOR VALUES IN ('history') PARTITION BY RANGE ("received_at");
--> statement-breakpoint
CREATE TABLE "events_history_default" PARTITION OF "events_history" DEFAULT;
--> statement-breakpoint

-- 4. One calendar month (UTC) of history: created when missing, with any rows the default partition took for that
-- month moved into it. Returns true when it created the month. Called by the migration below and, ahead of time, by
-- the servers' maintenance (lib/domain/retention/partitions.ts), as the tables' owner.
CREATE FUNCTION custody_ensure_event_month(month_start date) RETURNS boolean
  LANGUAGE plpgsql AS
$$
DECLARE
  lo timestamptz := (date_trunc('month', month_start)::timestamp AT TIME ZONE 'UTC');
  hi timestamptz := ((date_trunc('month', month_start) + interval '1 month')::timestamp AT TIME ZONE 'UTC');
  part text := format('events_history_%s', to_char(date_trunc('month', month_start), 'YYYY_MM'));
  strays bigint;
BEGIN
  IF to_regclass(format('public.%I', part)) IS NOT NULL THEN
    RETURN false;
  END IF;
  -- Serialises concurrent creators (several servers) of the same month.
  PERFORM pg_advisory_xact_lock(hashtext('custody_ensure_event_month'), hashtext(part));
  IF to_regclass(format('public.%I', part)) IS NOT NULL THEN
    RETURN false;
  END IF;
  SELECT count(*) INTO strays FROM events_history_default WHERE received_at >= lo AND received_at < hi;
  IF strays > 0 THEN
    CREATE TEMP TABLE custody_event_strays ON COMMIT DROP AS
      SELECT * FROM events_history_default WHERE received_at >= lo AND received_at < hi;
    DELETE FROM events_history_default WHERE received_at >= lo AND received_at < hi;
  END IF;
  EXECUTE format('CREATE TABLE public.%I PARTITION OF events_history FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
  -- Reached only through the parent: the app role gets nothing on the partition itself, and its wall stands anyway.
  EXECUTE format('REVOKE ALL ON public.%I FROM custody_app', part);
  EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', part);
  EXECUTE format('CREATE POLICY tenant_wall ON public.%I TO custody_app USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id())', part);
  IF strays > 0 THEN
    INSERT INTO events_history OVERRIDING SYSTEM VALUE SELECT * FROM custody_event_strays;
    DROP TABLE custody_event_strays;
  END IF;
  RETURN true;
END
$$;
--> statement-breakpoint

-- 5. The months the stored events fall in, and the next three.
SELECT custody_ensure_event_month(m::date)
FROM generate_series(
  date_trunc('month', coalesce((SELECT min(received_at) FROM events_unpartitioned), now()) AT TIME ZONE 'UTC'),
  date_trunc('month', now() AT TIME ZONE 'UTC') + interval '3 months',
  interval '1 month') AS m;
--> statement-breakpoint

-- 6. The stored events, in their partitions; the receive order continues where it was.
INSERT INTO "events" ("tenant_id", "event_id", "task_id", "plane", "type", "occurred_at", "received_at", "seq", "txid",
                      "environment_id", "attempt", "actor", "attrs", "redaction_count", "redaction_kinds",
                      "retention_class")
OVERRIDING SYSTEM VALUE
SELECT "tenant_id", "event_id", "task_id", "plane", "type", "occurred_at", "received_at", "seq", "txid",
       "environment_id", "attempt", "actor", "attrs", "redaction_count", "redaction_kinds",
       custody_event_retention_class("type")
FROM "events_unpartitioned";
--> statement-breakpoint
SELECT setval('events_seq_seq', greatest(coalesce((SELECT max(seq) FROM events_unpartitioned), 0), 1),
              (SELECT count(*) > 0 FROM events_unpartitioned));
--> statement-breakpoint
DROP TABLE "events_unpartitioned";
--> statement-breakpoint

-- 7. The indexes (each partition gets its own), as before; the id lookup (a stored event by its id: duplicates and
-- conflicts, event detail) is no longer unique here: event_ids holds the uniqueness.
CREATE INDEX "events_id_idx" ON "events" USING btree ("tenant_id","event_id");
--> statement-breakpoint
CREATE INDEX "events_timeline_idx" ON "events" USING btree ("tenant_id","task_id","occurred_at","event_id");
--> statement-breakpoint
CREATE INDEX "events_task_arrival_idx" ON "events" USING btree ("tenant_id","task_id","txid","seq");
--> statement-breakpoint
CREATE INDEX "events_tenant_environment_idx" ON "events" USING btree ("tenant_id","environment_id","task_id") WHERE "events"."plane" = 'environment' and "events"."environment_id" is not null;
--> statement-breakpoint
CREATE INDEX "events_tenant_host_idx" ON "events" USING btree ("tenant_id",lower("attrs" ->> 'host'),"task_id") WHERE ("events"."attrs" ->> 'host') is not null;
--> statement-breakpoint
CREATE INDEX "events_tenant_credential_ref_idx" ON "events" USING btree ("tenant_id",("attrs" ->> 'credential_ref'),"task_id") WHERE ("events"."attrs" ->> 'credential_ref') is not null;
--> statement-breakpoint
CREATE INDEX "events_task_facts_idx" ON "events" USING btree ("tenant_id","task_id","type","seq") WHERE "events"."type" in ('sandbox.created', 'sandbox.replaced', 'sandbox.verified', 'sandbox.destroyed', 'snapshot.saved', 'snapshot.restored', 'credential.issued', 'credential.attached', 'credential.revoked', 'credential.expired', 'tool.definition_changed', 'run.interrupted', 'run.resumed', 'run.stopped', 'compaction.performed', 'constraint.checked');
--> statement-breakpoint
CREATE INDEX "events_task_egress_idx" ON "events" USING btree ("tenant_id","task_id","type") WHERE "events"."type" in ('egress.allowed', 'egress.denied');
--> statement-breakpoint

-- 8. Tenant walls (decision 0016) on the parent, and on the partitions made here (reached only through the parent).
ALTER TABLE "events" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON "events" TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['events_facts', 'events_history', 'events_history_default'] LOOP
    EXECUTE format('REVOKE ALL ON public.%I FROM custody_app', t);
    EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_wall ON public.%I TO custody_app USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id())', t);
  END LOOP;
END $$;
