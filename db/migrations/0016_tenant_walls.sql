-- Tenant walls (docs/decisions/0016-tenant-walls.md): row-level security on every table with a tenant_id column,
-- as a second wall behind the tenant filter every query already carries.
--
-- The app runs each scoped transaction as custody_app (no BYPASSRLS, owns nothing), after
--   select set_config('role', 'custody_app', true), set_config('app.tenant_id', $tenant, true), set_config('app.user_id', $person, true)
-- (db/index.ts SCOPE_STATEMENT). The owner (whoever runs the migrations) owns the tables and is not subject to the
-- policies: migrations, scripts and the few lookups made before the tenant is known (getOwnerDb) use it.
--
-- A NEW TABLE WITH tenant_id needs, in its own migration (tests/integration/tenant-walls.test.ts fails without it):
--   ALTER TABLE my_table ENABLE ROW LEVEL SECURITY;
--   CREATE POLICY tenant_wall ON my_table TO custody_app
--     USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
-- (grants come from the default privileges below.)

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'custody_app') THEN
    CREATE ROLE custody_app NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS NOINHERIT;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL; -- another database of the same cluster created it at the same moment
END $$;
--> statement-breakpoint
-- The owner must be able to SET ROLE custody_app (a superuser always can).
DO $$
BEGIN
  IF NOT pg_has_role(current_user, 'custody_app', 'MEMBER') THEN
    EXECUTE format('GRANT custody_app TO %I', current_user);
  END IF;
END $$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO custody_app;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO custody_app;
--> statement-breakpoint
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO custody_app;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO custody_app;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO custody_app;
--> statement-breakpoint
-- The audit log is append-only (0001): the app role is not even granted the statements its trigger refuses.
REVOKE UPDATE, DELETE ON audit_log FROM custody_app;
--> statement-breakpoint
-- The scope of the current transaction; NULL (no row matches) when none was set. Inlined into the policies.
CREATE OR REPLACE FUNCTION app_tenant_id() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT nullif(current_setting('app.tenant_id', true), '')::uuid $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION app_user_id() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT nullif(current_setting('app.user_id', true), '')::uuid $$;
--> statement-breakpoint
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY[
    'api_keys', 'artifacts', 'audit_log', 'custody_exercises', 'custody_map_layers', 'custody_map_versions',
    'custody_maps', 'events', 'gate_asks', 'invitations', 'principal_revocations', 'side_effects',
    'task_checkpoints', 'tasks', 'tool_lookups', 'unapplied_receipts',
    'approval_requests', 'approval_settings', 'approval_action_rules', 'policy_versions', 'audit_heads'
  ] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format(
      'CREATE POLICY tenant_wall ON %I TO custody_app USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id())',
      t);
  END LOOP;
END $$;
--> statement-breakpoint
-- A person sees their own memberships in every workspace (the workspace switcher); changes stay in the scope's tenant.
ALTER TABLE memberships ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON memberships TO custody_app
  USING (tenant_id = app_tenant_id() OR user_id = app_user_id())
  WITH CHECK (tenant_id = app_tenant_id());
--> statement-breakpoint
-- A person's own sessions in every workspace: switching moves the session to another workspace, a password change
-- ends the others.
ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_wall ON sessions TO custody_app
  USING (tenant_id = app_tenant_id() OR user_id = app_user_id())
  WITH CHECK (tenant_id = app_tenant_id() OR user_id = app_user_id());
