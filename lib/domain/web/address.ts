/**
 * What an address (a request URL, or its path and query) may not hold, shared by the proxy (pages) and the API route
 * wrapper (lib/server/route.ts), so both refuse the same addresses.
 */

/** A NUL written into an address, escaped (`%00`) or not. */
const NUL_IN_ADDRESS = /%00|\u0000/i;

/**
 * Whether `address` holds a NUL: PostgreSQL cannot store or compare text with one, so a task id, a filter or a search
 * term carrying it would fail its statement.
 * @param address a URL, or a path with its query.
 */
export function holdsNul(address: string): boolean {
  return NUL_IN_ADDRESS.test(address);
}

/** The message both refusals give. */
export const NUL_IN_ADDRESS_MESSAGE =
  "The address holds a NUL character (%00), which no id, filter or search term may contain; remove it.";
