CREATE TABLE "audit_pending" (
	"tenant_id" uuid NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "audit_pending_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp (6) with time zone NOT NULL,
	"actor_kind" "actor_kind" NOT NULL,
	"actor_id" text NOT NULL,
	"actor_label" text NOT NULL,
	"action" text NOT NULL,
	"target" text NOT NULL,
	"details" jsonb NOT NULL,
	"json_prefix" text NOT NULL,
	"json_suffix" text NOT NULL,
	CONSTRAINT "audit_pending_pkey" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE INDEX "events_task_egress_idx" ON "events" USING btree ("tenant_id","task_id","type") WHERE "events"."type" in ('egress.allowed', 'egress.denied');--> statement-breakpoint
-- Audit sealing (docs/decisions/0020-audit-sealing.md): the hot paths write their audit entry to audit_pending in the
-- transaction of the change; seal_audit moves a tenant's pending entries into the hash chain (audit_log) in arrival
-- order, under the tenant's sealing lock and the head row, many entries per call. The hash is the one appendAudit
-- computes: sha256(prev_hash || json_prefix || seq || json_suffix), the RFC 8785 JSON of the entry.
ALTER TABLE audit_pending ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON audit_pending TO custody_app
  USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
CREATE OR REPLACE FUNCTION seal_audit(p_tenant uuid, p_upto bigint DEFAULT NULL) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  r record;
  v_seq bigint;
  v_prev text;
  v_before text;
  v_hash text;
  v_ids bigint[] := '{}';
BEGIN
  -- The caller's entries (ids up to p_upto; every entry when NULL) were sealed by another call already: no lock, nothing
  -- written, so the commit has nothing to flush.
  IF NOT EXISTS (SELECT 1 FROM audit_pending WHERE tenant_id = p_tenant AND (p_upto IS NULL OR id <= p_upto)) THEN
    RETURN 0;
  END IF;
  PERFORM pg_advisory_xact_lock(724202, hashtext(p_tenant::text));
  -- While this call waited, the holder may have sealed them: then again nothing is written (no flush to wait for).
  -- Otherwise this call seals every entry of the tenant now pending, its own and later ones, in one flush.
  IF NOT EXISTS (SELECT 1 FROM audit_pending WHERE tenant_id = p_tenant AND (p_upto IS NULL OR id <= p_upto)) THEN
    RETURN 0;
  END IF;
  -- The head row exists from here on (seq 0 and the genesis hash before the first entry), and is held to the end.
  INSERT INTO audit_heads (tenant_id, seq, prev_hash, hash)
  VALUES (p_tenant, 0, repeat('0', 64), repeat('0', 64))
  ON CONFLICT (tenant_id) DO NOTHING;
  SELECT seq, hash, prev_hash INTO v_seq, v_prev, v_before FROM audit_heads WHERE tenant_id = p_tenant FOR UPDATE;
  -- A fresh snapshot: what another sealer took while this one waited is gone from here.
  FOR r IN SELECT * FROM audit_pending WHERE tenant_id = p_tenant ORDER BY id LOOP
    v_seq := v_seq + 1;
    v_before := v_prev;
    v_hash := encode(sha256(convert_to(v_prev || r.json_prefix || v_seq::text || r.json_suffix, 'UTF8')), 'hex');
    INSERT INTO audit_log (tenant_id, seq, at, actor_kind, actor_id, actor_label, action, target, details, prev_hash, hash)
    VALUES (p_tenant, v_seq, r.at, r.actor_kind, r.actor_id, r.actor_label, r.action, r.target, r.details, v_prev, v_hash);
    v_prev := v_hash;
    v_ids := v_ids || r.id;
  END LOOP;
  IF cardinality(v_ids) = 0 THEN
    RETURN 0;
  END IF;
  UPDATE audit_heads SET seq = v_seq, prev_hash = v_before, hash = v_prev WHERE tenant_id = p_tenant;
  DELETE FROM audit_pending WHERE tenant_id = p_tenant AND id = ANY (v_ids);
  RETURN cardinality(v_ids);
END
$$;
