/**
 * The first argument of every domain verb: `verb(ctx, input)`. A verb is a domain function a transport (route, page,
 * script) calls on behalf of an actor; `ctx` says who acts and on which database, `input` is one object with the
 * verb's own arguments. Steps inside a verb's transaction keep taking the transaction and the tenant id.
 *
 * Who builds it: an API route gets it from `apiRoute` (lib/server/route.ts), a page from `requirePageContext`
 * (lib/server/page-actor.ts), a script or a test from its own database handle and actor.
 */
import type { Db } from "@/db";
import type { Actor } from "./authz";
import type { SigningKey } from "./crypto/signing";

/** Who acts, and the database they act on. */
export type VerbContext<A extends Actor = Actor> = {
  /**
   * The database walled to `actor`'s tenant by row-level security (docs/decisions/0016-tenant-walls.md) in the
   * server; scripts and tests may pass the owner's handle.
   */
  readonly db: Db;
  /** Authorized first by every verb (lib/domain/authz.ts). */
  readonly actor: A;
};

/**
 * The context of a verb that signs or verifies what it stores or returns (checkpoint records, gate verdicts, event
 * digests): the server's Ed25519 key (lib/config/signing-key.ts) beside who acts.
 */
export type SigningContext<A extends Actor = Actor> = VerbContext<A> & { readonly signingKey: SigningKey };
