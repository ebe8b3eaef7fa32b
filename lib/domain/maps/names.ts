/**
 * Names that only look filled, and the text form of a request for evidence: the pure parts of the custody-map
 * rules (lib/domain/maps/rules.ts), with no imports, so the worksheet in the browser uses the very same ones.
 */

/** Whole values (letters and digits only, lower case) that name nobody. */
const PLACEHOLDER_VALUES = new Set([
  "na",
  "nan",
  "tbd",
  "tbc",
  "tba",
  "tobedecided",
  "tobedetermined",
  "tobeconfirmed",
  "tobeannounced",
  "notapplicable",
  "notknown",
  "notassigned",
  "notyetassigned",
  "notsure",
  "noone",
  "sharedresponsibility",
]);

/** Words that name nobody, alone or only together with each other and {@link FILLER_WORDS}. */
const VAGUE_WORDS = new Set([
  "shared",
  "share",
  "sharing",
  "everyone",
  "everybody",
  "all",
  "anyone",
  "anybody",
  "both",
  "joint",
  "jointly",
  "common",
  "collective",
  "mutual",
  "tbd",
  "tbc",
  "tba",
  "unknown",
  "unassigned",
  "none",
  "nobody",
  "noone",
  "nil",
  "null",
  "undefined",
  "various",
  "whoever",
  "someone",
  "somebody",
  "pending",
  "todo",
  "xxx",
  "etc",
  "misc",
]);

/** Words that do not make a name on their own ("the team", "our side"). */
const FILLER_WORDS = new Set([
  "and",
  "or",
  "the",
  "of",
  "by",
  "between",
  "with",
  "team",
  "teams",
  "party",
  "parties",
  "responsibility",
  "responsibilities",
  "responsible",
  "ownership",
  "owner",
  "owners",
  "group",
  "groups",
  "us",
  "we",
  "them",
  "they",
  "our",
  "their",
  "other",
  "others",
  "side",
  "sides",
]);

/** Lower case, compatibility-folded, accents and invisible formatting characters removed. */
function fold(value: string): string {
  return value
    .normalize("NFKD")
    .replace(/[\p{M}\p{Cf}]/gu, "")
    .toLowerCase();
}

/** The value's letters and digits only, folded: `"N / A"` → `na`, `"T.B.D."` → `tbd`. */
export function compactName(value: string): string {
  return fold(value).replace(/[^\p{L}\p{N}]+/gu, "");
}

/**
 * True when `value` does not name a party although it may look filled: empty or blank, punctuation only, or a
 * placeholder such as "shared", "everyone", "TBD", "n/a", "to be decided", "the team" — in any case, with any
 * spacing, punctuation or accents. Real names that merely contain such a word ("Shared Services (Acme)") pass.
 */
export function isPlaceholderName(value: string): boolean {
  const compact = compactName(value);
  if (!compact) return true;
  if (PLACEHOLDER_VALUES.has(compact)) return true;
  const words = fold(value)
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  return words.every((w) => VAGUE_WORDS.has(w) || FILLER_WORDS.has(w));
}

/** How a refused value is quoted back in a message (short, plain). */
export function quoted(value: string): string {
  const t = value.trim();
  if (!t) return "An empty value";
  const shown = [...t].length > 40 ? `${[...t].slice(0, 39).join("")}…` : t;
  return JSON.stringify(shown);
}

export const NAME_BOTH_SIDES =
  "name both sides — each team or service with its organization — and describe the handoff between them";

/** Ready-made constraints the worksheet offers (a constraint may be any text). */
export const CONSTRAINT_PRESETS = ["Shorter runs", "Lower permissions", "Reversible effects only"] as const;

/**
 * Splits a request for evidence into what is missing and from whom, at the last word "from":
 * `"Revocation window for derived tokens — from Identity team (Acme)"` → what + whom. Null when there is none.
 */
export function splitEvidenceRequest(note: string): { what: string; whom: string } | null {
  const t = note.trim();
  let at = -1;
  for (const m of t.matchAll(/\bfrom\b/gi)) at = m.index;
  if (at < 0) return null;
  return {
    what: t
      .slice(0, at)
      .replace(/[\s,;:—–-]+$/u, "")
      .trim(),
    whom: t.slice(at + 4).trim(),
  };
}

/** The one text a request for evidence is stored as: `"<what> — from <whom>"`. */
export function joinEvidenceRequest(what: string, whom: string): string {
  return `${what.trim()} — from ${whom.trim()}`;
}
