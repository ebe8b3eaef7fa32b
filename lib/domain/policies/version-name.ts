/**
 * One name for a policy version everywhere (issue 24, docs/decisions/0047-one-policy-version-name.md).
 *
 * The same version is written three ways: the runtime's record field `policy_version` (e.g. `"policy-v1"`, kept as
 * the runtime sent it), the number of a stored version (`1`, the Policies page), and the label approvals bind to
 * (`"1"`, lib/domain/policies/current.ts). {@link policyVersionNumber} is the one rule that reads any of them as a
 * number (the rule the approval page already used to link a stale approval's policy change to its diff);
 * {@link policyVersionName} is the one display name (`v1`) every page shows; {@link policyVersionFilter} is the one
 * parse of the task filter `policy_version`. Pure functions: safe in client components.
 */
import { DomainError } from "../errors";

const VERSION = /^(?:policy-)?v?(\d{1,9})$/i;

/**
 * A policy version as a number, from any of the ways it is written (`3`, `v3`, `policy-v3`, any case, surrounding
 * spaces ignored).
 * @returns the positive number, or null for anything else (an arbitrary runtime string such as `"canary"`).
 */
export function policyVersionNumber(v: string | number | null | undefined): number | null {
  if (typeof v === "number") return Number.isInteger(v) && v > 0 ? v : null;
  const m = v ? VERSION.exec(v.trim()) : null;
  const n = m ? Number(m[1]) : 0;
  return n > 0 ? n : null;
}

/**
 * The display name of a policy version on every page and in gate reasons: `v3` for `3`, `"3"`, `"v3"` or
 * `"policy-v3"`; a runtime string that names no number is shown as it is; `—` when there is none.
 */
export function policyVersionName(v: string | number | null | undefined): string {
  if (v === null || v === undefined || v === "") return "—";
  const n = policyVersionNumber(v);
  return n !== null ? `v${n}` : String(v);
}

/** What the task filter `policy_version` asks for: a version number (any spelling), or a runtime string as stored. */
export type PolicyVersionFilter = { number: number } | { text: string };

/** Characters a stored runtime `policy_version` never holds in the filter (controls, quotes, spaces inside). */
const PLAIN = /^[\x21-\x7e]{1,100}$/;
/** A value that tries to be a version number but is not one (`v`, `v0`, `1.5`, `-1`, `policy-v`). */
const NUMBERISH = /^(?:policy-)?v?[-+.\d]*$/i;

/**
 * Parses the task filter `policy_version` (`GET /api/v1/tasks`, the Tasks page): `1`, `v1` and `policy-v1` all ask
 * for version 1 (tasks whose runtime string reads as 1 by {@link policyVersionNumber}); any other plain string asks for
 * tasks that stored exactly that string.
 * @returns undefined when empty.
 * @throws DomainError bad_request (400) naming `policy_version` for a malformed value (not a version number though
 *   it looks like one, longer than 100 characters, spaces or controls inside).
 */
export function policyVersionFilter(raw: string | null | undefined): PolicyVersionFilter | undefined {
  const v = raw?.trim();
  if (!v) return undefined;
  const n = policyVersionNumber(v);
  if (n !== null) return { number: n };
  if (!PLAIN.test(v) || NUMBERISH.test(v))
    throw new DomainError(
      "bad_request",
      "policy_version is a policy version (1, v1 or policy-v1) or the runtime's version string (at most 100 printable characters).",
      { fields: [{ path: "policy_version", message: "a policy version such as 1, v1 or policy-v1" }] },
    );
  return { text: v };
}
