/**
 * The default branch of an exhaustive `switch` over a closed vocabulary: it compiles only when every member has its
 * own case, so a member added to the vocabulary points the compiler at each switch that must handle it
 * (docs/decisions/0023-typed-catalogues.md). Throws if reached at run time (a value from outside the type).
 */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}
