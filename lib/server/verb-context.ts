/**
 * Verb contexts for the transports (lib/domain/context.ts): `apiRoute` and `requirePageContext` build `{db, actor}`;
 * this adds the signing key for the verbs that need it.
 */
import { getSigningKey } from "@/lib/config/signing-key";
import type { SigningContext, VerbContext } from "@/lib/domain/context";

/**
 * `ctx` with the server's signing key, for the verbs that sign or verify (checkpoints, the gate, events, task views).
 * The key is read when such a verb is called, so a route that signs nothing never needs one configured.
 * @throws Error when no signing key is configured (lib/config/signing-key.ts).
 */
export function withSigningKey<C extends VerbContext>(ctx: C): C & SigningContext<C["actor"]> {
  return { ...ctx, signingKey: getSigningKey() };
}
