/**
 * Checks on the raw text of a JSON document that `JSON.parse` does not make, done in one linear pass before
 * anything walks the parsed value (decision 0009: input that cannot crash or silently change):
 * - nesting deeper than a limit (recursive walks — `JSON.stringify`, zod, canonical JSON, redaction — would
 *   otherwise overflow the stack: a 5,000-level `attrs` would answer 500);
 * - numbers a double cannot carry exactly (`1234567890123456789` would be stored as `…800`, `1e400` as `null`, a
 *   checkpoint's `9007199254740993` signed as `…992`): a value the sender did not send is never stored or signed;
 * - the key `__proto__` (JSON.parse keeps it as a plain key, but copying the object drops it or swaps the prototype);
 * - a key repeated in one object (JSON.parse keeps the last value silently).
 * Decision 0009.
 */

export type JsonTextProblem = { path: string; message: string };

const QUOTE = 34;
const BACKSLASH = 92;

/** Decimal form of a number token: sign, significant digits, and the power of ten of the first one. */
function decimal(token: string): { negative: boolean; digits: string; power: number } {
  let i = 0;
  const negative = token.charCodeAt(0) === 45;
  if (negative) i = 1;
  let digits = "";
  let intLen = 0;
  let seenPoint = false;
  for (; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c === 46) {
      seenPoint = true;
      continue;
    }
    if (c === 101 || c === 69) break;
    digits += token[i];
    if (!seenPoint) intLen++;
  }
  const exp = i < token.length ? Number(token.slice(i + 1)) : 0;
  let lead = 0;
  while (lead < digits.length && digits.charCodeAt(lead) === 48) lead++;
  let end = digits.length;
  while (end > lead && digits.charCodeAt(end - 1) === 48) end--;
  return { negative, digits: digits.slice(lead, end), power: intLen - 1 - lead + exp };
}

/**
 * The double a JSON number token becomes, as text, when it is not the same decimal value; null when the token
 * is carried exactly. Tokens of at most 15 significant digits with their leading digit between 1e-307 and 1e307
 * always round-trip (IEEE 754 double, DBL_DIG = 15), so only longer ones are converted and compared.
 */
export function inexactNumber(token: string): string | null {
  let significant = 0;
  let started = false;
  let zerosRun = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c === 101 || c === 69) break;
    if (c < 48 || c > 57) continue;
    if (c === 48) {
      if (started) zerosRun++;
      continue;
    }
    if (started) significant += zerosRun;
    zerosRun = 0;
    started = true;
    significant++;
  }
  if (!started) return null; // zero, whatever its sign or exponent
  if (significant <= 15) {
    const d = decimal(token);
    if (d.power >= -307 && d.power <= 307) return null;
  }
  const value = Number(token);
  if (!Number.isFinite(value)) return String(value);
  const a = decimal(token);
  const b = decimal(String(value));
  return a.digits === b.digits && a.power === b.power && (a.negative === b.negative || !a.digits)
    ? null
    : String(value);
}

/** The path segment that marks a JSON document held in a string: `arguments(JSON).password`. */
export const EMBEDDED_JSON_SEGMENT = "(JSON)";

/** `a.b[0]["odd key"]` from path segments. */
export function formatPath(segments: ReadonlyArray<string | number>): string {
  let out = "";
  for (const s of segments) {
    if (typeof s === "number") out += `[${s}]`;
    else if (s === EMBEDDED_JSON_SEGMENT) out += s;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(s)) out += out ? `.${s}` : s;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

/** One pass of the checks; `wantPathAt` >= 0 makes it record the path at that offset instead of checking. */
function walkText(
  text: string,
  maxDepth: number,
  wantPathAt: number,
): { problem: { offset: number; message: string; key?: string } | null; path: Array<string | number> } {
  const n = text.length;
  const kinds = new Uint8Array(maxDepth + 3); // 1 object, 2 array, per open container
  const keys: Array<string | Set<string> | null> = [];
  const pathKeys: Array<string | number> = [];
  let depth = 0;
  let expectKey = false;
  let nextBackslash = -2;
  const tracking = wantPathAt >= 0;
  const snapshot = () => pathKeys.slice(0, depth);
  let i = 0;
  while (i < n) {
    if (tracking && i >= wantPathAt) return { problem: null, path: snapshot() };
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let j = i + 1;
      for (;;) {
        j = text.indexOf('"', j);
        if (j < 0) return { problem: null, path: [] };
        let bs = 0;
        while (text.charCodeAt(j - 1 - bs) === BACKSLASH) bs++;
        if (bs % 2 === 0) break;
        j++;
      }
      if (expectKey && kinds[depth] === 1) {
        if (nextBackslash !== -1 && nextBackslash < i + 1) nextBackslash = text.indexOf("\\", i + 1);
        const raw = nextBackslash >= 0 && nextBackslash < j;
        const key = raw ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
        expectKey = false;
        if (tracking) pathKeys[depth - 1] = key;
        else {
          if (key === "__proto__")
            return {
              problem: { offset: i, key, message: 'uses the key "__proto__", which is not accepted' },
              path: [],
            };
          const seen = keys[depth];
          if (seen === null || seen === undefined) keys[depth] = key;
          else if (typeof seen === "string") {
            if (seen === key)
              return {
                problem: {
                  offset: i,
                  key,
                  message: `repeats the key ${JSON.stringify(key)}; each key may appear once in an object`,
                },
                path: [],
              };
            keys[depth] = new Set([seen, key]);
          } else {
            if (seen.has(key))
              return {
                problem: {
                  offset: i,
                  key,
                  message: `repeats the key ${JSON.stringify(key)}; each key may appear once in an object`,
                },
                path: [],
              };
            seen.add(key);
          }
        }
      }
      i = j + 1;
      continue;
    }
    if (c === 123 || c === 91) {
      if (!tracking && depth > maxDepth)
        return { problem: { offset: i, message: `is nested deeper than ${maxDepth} levels` }, path: [] };
      depth++;
      if (depth < kinds.length) kinds[depth] = c === 123 ? 1 : 2;
      keys[depth] = null;
      expectKey = c === 123;
      if (tracking) pathKeys[depth - 1] = c === 91 ? 0 : "";
      i++;
      continue;
    }
    if (c === 125 || c === 93) {
      depth--;
      expectKey = false;
      i++;
      continue;
    }
    if (c === 44) {
      if (kinds[depth] === 1) expectKey = true;
      else if (tracking && kinds[depth] === 2) pathKeys[depth - 1] = (pathKeys[depth - 1] as number) + 1;
      i++;
      continue;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if ((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45) j++;
        else break;
      }
      if (!tracking && j - i > 15) {
        const becomes = inexactNumber(text.slice(i, j));
        if (becomes !== null) {
          return {
            problem: {
              offset: i,
              message: `is the number ${text.slice(i, j)}, which cannot be kept exactly (it would become ${becomes}); send it as a string`,
            },
            path: [],
          };
        }
      } else if (!tracking && j - i > 1) {
        const tok = text.slice(i, j);
        if (tok.includes("e") || tok.includes("E")) {
          const becomes = inexactNumber(tok);
          if (becomes !== null) {
            return {
              problem: {
                offset: i,
                message: `is the number ${tok}, which cannot be kept exactly (it would become ${becomes}); send it as a string`,
              },
              path: [],
            };
          }
        }
      }
      i = j;
      continue;
    }
    i++;
  }
  return { problem: null, path: snapshot() };
}

/**
 * The first problem of a JSON text that `JSON.parse` accepted, with the path of the value it concerns, or null.
 * @param text valid JSON (check it with JSON.parse first: on invalid text the answer means nothing).
 * @param maxDepth deepest nesting allowed below the top-level value (0: the top-level value holds no container).
 */
export function checkJsonText(text: string, maxDepth: number): JsonTextProblem | null {
  const { problem } = walkText(text, maxDepth, -1);
  if (!problem) return null;
  const at = walkText(text, maxDepth, problem.offset).path;
  const segments = problem.key === undefined ? at : [...at.slice(0, -1), problem.key];
  return { path: formatPath(segments), message: problem.message };
}

/**
 * Where a JSON text first opens a container past `maxDepth` levels below its top-level value, counting brackets outside
 * strings only; -1 when it does not. Meaningful on any text, valid JSON or not.
 */
function tooDeepAt(text: string, maxDepth: number): number {
  const n = text.length;
  let depth = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let j = i + 1;
      for (;;) {
        j = text.indexOf('"', j);
        if (j < 0) return -1;
        let bs = 0;
        while (text.charCodeAt(j - 1 - bs) === BACKSLASH) bs++;
        if (bs % 2 === 0) break;
        j++;
      }
      i = j + 1;
      continue;
    }
    if (c === 123 || c === 91) {
      if (depth > maxDepth) return i;
      depth++;
    } else if (c === 125 || c === 93) depth--;
    i++;
  }
  return -1;
}

/** What {@link parseJsonText} makes of a text. */
export type ParsedJsonText = { value: unknown } | { invalid: true } | { problem: JsonTextProblem };

/**
 * Parses a JSON text under the checks of {@link checkJsonText}. Nesting past `maxDepth` is refused before
 * `JSON.parse` builds anything: a 1 MiB body of brackets would hold the event loop for 100–300 ms in `JSON.parse`
 * (every other request on the server waiting), while counting its brackets stops at the limit within a millisecond.
 * @param maxDepth deepest nesting allowed below the top-level value, as for {@link checkJsonText}.
 * @returns `{ value }` for an accepted text, `{ invalid: true }` when it is not JSON, `{ problem }` when a check
 *   refuses it (a text nested too deep is refused so whether or not the rest of it is JSON).
 */
export function parseJsonText(text: string, maxDepth: number): ParsedJsonText {
  const deepAt = tooDeepAt(text, maxDepth);
  if (deepAt >= 0) {
    let path: Array<string | number> = [];
    try {
      path = walkText(text, maxDepth, deepAt).path;
    } catch {
      // A key that is not a JSON string on the way there: the problem is named without its path.
    }
    return { problem: { path: formatPath(path), message: `is nested deeper than ${maxDepth} levels` } };
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return { invalid: true };
  }
  const problem = checkJsonText(text, maxDepth);
  return problem ? { problem } : { value };
}

/**
 * Parses a JSON text nested at most `maxDepth` levels below its top-level value, without the other checks of
 * {@link parseJsonText}: for text the server only reads and shows (a trace's tool arguments and output, a lookup's or a
 * revocation endpoint's answer, an artifact's preview), where a repeated key or a long number is taken as `JSON.parse`
 * takes it. A text nested deeper is not parsed at all.
 * @returns `{ value }`, or null when the text is not JSON or is nested deeper.
 */
export function parseJsonWithin(text: string, maxDepth: number): { value: unknown } | null {
  if (tooDeepAt(text, maxDepth) >= 0) return null;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return null;
  }
}
