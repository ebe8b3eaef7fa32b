ALTER TABLE "approval_requests" ADD COLUMN "decision_seal" text;--> statement-breakpoint
-- hand-written:
-- Requests decided before decision seals (decision 0036) are marked, not sealed: a migration has no key, and sealing
-- them at start-up would vouch for whatever they hold then. The gate trusts a marked decision as it trusted every one.
UPDATE "approval_requests" SET "decision_seal" = 'legacy' WHERE "decision" IS NOT NULL;
