import { DomainError } from "../errors";
import { policyVersionNumber } from "./version-name";

/**
 * A policy version from a URL segment, in any of the ways the pages and runtimes write it (`3`, `v3`, `policy-v3`;
 * the one rule of lib/domain/policies/version-name.ts, decision 0047).
 * @throws DomainError bad_request (400) for anything else.
 */
export function policyVersionParam(raw: string): number {
  const n = policyVersionNumber(raw);
  if (n === null)
    throw new DomainError(
      "bad_request",
      "A policy version is a positive whole number, written 3, v3 or policy-v3, e.g. /api/v1/policies/v3.",
    );
  return n;
}
