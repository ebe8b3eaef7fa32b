ALTER TABLE "side_effects" ADD COLUMN "seal" text;--> statement-breakpoint
ALTER TABLE "task_checkpoints" ADD COLUMN "signature_format" smallint DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "task_checkpoints" ADD COLUMN "binding_signature" text;--> statement-breakpoint
-- hand-written:
-- Rows written before seals (decision 0035) are marked, not sealed: a migration has no key, and sealing them at start-up
-- would vouch for whatever they hold then. The gate trusts a marked row as it trusted every row before.
UPDATE "side_effects" SET "seal" = 'legacy';
