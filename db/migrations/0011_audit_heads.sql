CREATE TABLE "audit_heads" (
	"tenant_id" uuid PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL
);
--> statement-breakpoint
-- The head of every existing chain: its last entry.
INSERT INTO "audit_heads" ("tenant_id", "seq", "prev_hash", "hash")
SELECT DISTINCT ON ("tenant_id") "tenant_id", "seq", "prev_hash", "hash" FROM "audit_log" ORDER BY "tenant_id", "seq" DESC;
