/**
 * Every action an audit entry records, one closed vocabulary (docs/decisions/0023-typed-catalogues.md). The naming
 * rule: `<resource>.<past participle>` — two segments of lower-case snake_case; the first names the kind of thing the
 * change touched, the second says what happened to it, in the past tense, alone (`map.published`) or after the part
 * of the resource it concerns (`member.role_changed`). The participle ends in `-ed` (a regular verb: `lookup.saved`,
 * not `lookup.set`), which the type below checks; a unit test checks the segments. Notifications name events the
 * same way (`approval.requested`, `policy.activated`).
 *
 * Entries are hash-chained and never rewritten: entries written before this rule keep the names they were written
 * under (decision 0023 lists them), so whatever reads the log takes `action` as stored text.
 */
export const AUDIT_ACTIONS = [
  "api_key.created",
  "api_key.revoked",
  "approval.decided",
  "approval.invalidated",
  "approval.requested",
  "approval_rule.changed",
  "approval_rule.removed",
  "approval_settings.changed",
  "artifact.uploaded",
  "credential.revocation_checked",
  "events.retention_applied",
  "exercise.completed",
  "exercise.created",
  "exercise.updated",
  "invitation.accepted",
  "invitation.created",
  "lookup.deleted",
  "lookup.saved",
  "map.created",
  "map.imported",
  "map.published",
  "map.renamed",
  "map.archived",
  "map.unarchived",
  "map.signoff_recorded",
  "map.version_imported",
  "map_comment.added",
  "map_evidence.added",
  "map_evidence.removed",
  "map_layer.assigned",
  "map_layer.updated",
  "member.added",
  "notification_delivery.requeued",
  "notification_endpoint.created",
  "notification_endpoint.deleted",
  "notification_settings.changed",
  "member.removed",
  "member.role_changed",
  "member.unlocked",
  "policy.activated",
  "policy.changed",
  "policy.stored",
  "principal.restored",
  "principal.revoked",
  "run_state.imported",
  "settings.retention_changed",
  "side_effect.intent_recorded",
  "side_effect.receipt_recorded",
  "side_effect.reconciled",
  "side_effect.transitioned",
  "task.checkpointed",
  "task.deleted",
  "task.fenced",
  "task.terminated",
  "tool_definition.accepted",
  "user.password_changed",
  "webhook_source.created",
  "webhook_source.deleted",
  "webhook_source.secret_removed",
  "webhook_source.secret_rotated",
  "webhook_source.trust_changed",
  "workspace.created",
] as const satisfies readonly `${string}.${string}ed`[];

/** An action an audit entry may be written with. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * The names entries were written under before the naming rule (docs/decisions/0023-typed-catalogues.md, its renames
 * table), by the name that replaced them. A reader that selects by action also takes the earlier name: stored
 * entries are never rewritten (their hash covers the name).
 */
export const EARLIER_ACTION_NAMES: Partial<Record<AuditAction, readonly string[]>> = {
  "api_key.created": ["api_key.create"],
  "api_key.revoked": ["api_key.revoke"],
  "credential.revocation_checked": ["credential.revocation_check"],
  "exercise.created": ["exercise.create"],
  "exercise.updated": ["exercise.update"],
  "exercise.completed": ["exercise.complete"],
  "invitation.created": ["invitation.create"],
  "invitation.accepted": ["invitation.accept"],
  "lookup.saved": ["lookup.set"],
  "lookup.deleted": ["lookup.delete"],
  "map.created": ["map.create"],
  "map.imported": ["map.import"],
  "map.published": ["map.publish"],
  "map_layer.updated": ["map.layer.update"],
  "member.added": ["member.add"],
  "member.removed": ["member.remove"],
  "member.role_changed": ["member.role_change"],
  "member.unlocked": ["member.unlock"],
  "policy.stored": ["policy.store"],
  "policy.activated": ["policy.activate"],
  "principal.revoked": ["principal.revoke"],
  "principal.restored": ["principal.restore"],
  "side_effect.intent_recorded": ["side_effect.intent"],
  "side_effect.receipt_recorded": ["side_effect.receipt"],
  "side_effect.reconciled": ["side_effect.reconcile"],
  "task.checkpointed": ["task.checkpoint"],
  "user.password_changed": ["user.password_change"],
  "workspace.created": ["workspace.create"],
};
