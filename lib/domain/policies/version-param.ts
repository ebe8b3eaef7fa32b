import { DomainError } from "../errors";

/**
 * A policy version from a URL segment: a positive integer.
 * @throws DomainError bad_request (400) for anything else.
 */
export function policyVersionParam(raw: string): number {
  if (!/^[1-9]\d{0,8}$/.test(raw))
    throw new DomainError("bad_request", "A policy version is a positive whole number, e.g. /api/v1/policies/3.");
  return Number(raw);
}
