/**
 * Names that say their value is a secret: a JSON field (`"password": …`), a header (`Cookie: …`, `["X-Api-Key",
 * "…"]`), a query or form parameter (`?access_token=…`), an assignment (`DB_PASSWORD=…`).
 *
 * A name is split into words at `-`, `_`, `.` and spaces and at camelCase boundaries (`sessionToken` →
 * session, token; `APIKey` → api, key), lower-cased, and is secret when its last words are one of
 * {@link SECRET_ENDINGS}: `db_password`, `X-Api-Key`, `github_token`, `Set-Cookie`, `clientSecret`. Names that only
 * contain such a word keep their value: `token_count`, `input_tokens`, `secret_name`, `password_policy`,
 * `credential_id`, `tokenizer`, `aws_access_key_id`, `credential_ref`. A last word that ends in `password`, `passwd` or
 * `passphrase` counts too (`PGPASSWORD`, `dbpassword`).
 *
 * Some names also name ordinary things: `pass` (a pass count), `pwd` (a working directory), `auth` (a method),
 * `credentials` (a list of credential names, as in policy documents and sandbox manifests). These are *weak*
 * ({@link WEAK_SECRET_ENDINGS}): their value is secret only when it looks like one ({@link weakValueLooksSecret}).
 * Source: decisions 0008 (header pairs, secret fields of any type) and 0027 (weak names); word lists after the field
 * names gitleaks' generic and database-password rules and secretlint's presets look for.
 */

/** Last words of a secret name, each a word sequence. */
export const SECRET_ENDINGS: readonly (readonly string[])[] = [
  ["password"],
  ["passwd"],
  ["passphrase"],
  ["secret"],
  ["secret", "value"],
  ["secret", "access", "key"],
  ["token"],
  ["cookie"],
  ["authorization"],
  ["authorisation"],
  ["bearer"],
  ["placeholder"],
  ["apikey"],
  ["api", "key"],
  ["privatekey"],
  ["private", "key"],
  ["secretkey"],
  ["secret", "key"],
  ["signing", "key"],
  ["encryption", "key"],
  ["master", "key"],
  ["account", "key"],
  ["accountkey"],
  ["shared", "access", "key"],
  ["sharedaccesskey"],
  // signed URLs: Azure SAS `sig=`, S3 presigned `X-Amz-Signature=`
  ["sig"],
  ["amz", "signature"],
];

/**
 * Last words of a weak secret name: a string value is secret when {@link weakValueLooksSecret} says so; numbers,
 * booleans and objects under it are ordinary data (objects are judged by their own field names).
 */
export const WEAK_SECRET_ENDINGS: readonly (readonly string[])[] = [
  ["pass"],
  ["pwd"],
  ["sshpass"],
  ["auth"],
  ["creds"],
  ["credential"],
  ["credentials"],
];

/** Endings of one word that make it a secret name (`PGPASSWORD`, `rootpassword`). */
const SECRET_WORD_SUFFIXES = ["password", "passwd", "passphrase"];

/** Header names whose whole value (to the end of the line) is a credential: `Cookie: a=1; b=2`. */
export const SECRET_HEADER_ENDINGS: readonly (readonly string[])[] = [["cookie"], ["authorization"], ["authorisation"]];

/** Longest tail of a name that is looked at (the longest ending is well under this). */
const NAME_TAIL = 64;

/** Lower-cased words of a name: split at runs of `-_. ` and at camelCase boundaries. Pure. */
export function nameWords(name: string): string[] {
  const tail = name.length > NAME_TAIL ? name.slice(name.length - NAME_TAIL) : name;
  const words: string[] = [];
  let start = 0;
  for (let i = 0; i <= tail.length; i++) {
    const c = i < tail.length ? tail.charCodeAt(i) : 32;
    if (c === 45 || c === 95 || c === 46 || c === 32) {
      if (i > start) words.push(tail.slice(start, i).toLowerCase());
      start = i + 1;
      continue;
    }
    if (c >= 65 && c <= 90 && i > start) {
      const prev = tail.charCodeAt(i - 1);
      const prevLower = (prev >= 97 && prev <= 122) || (prev >= 48 && prev <= 57);
      const next = i + 1 < tail.length ? tail.charCodeAt(i + 1) : 0;
      // sessionToken → session|Token; APIKey → API|Key
      if (prevLower || (prev >= 65 && prev <= 90 && next >= 97 && next <= 122)) {
        words.push(tail.slice(start, i).toLowerCase());
        start = i;
      }
    }
  }
  return words;
}

function endsWith(words: string[], endings: readonly (readonly string[])[]): boolean {
  for (const ending of endings) {
    if (ending.length > words.length) continue;
    let ok = true;
    for (let k = 0; k < ending.length; k++) {
      if (words[words.length - ending.length + k] !== ending[k]) {
        ok = false;
        break;
      }
    }
    if (ok) return true;
  }
  return false;
}

function endsWithSuffix(words: string[]): boolean {
  const last = words[words.length - 1];
  return last !== undefined && SECRET_WORD_SUFFIXES.some((s) => last.length > s.length && last.endsWith(s));
}

/** 0: not secret, 1: secret, 2: secret header (value to the end of the line), 3: weak. Cached: names repeat. */
const cache = new Map<string, 0 | 1 | 2 | 3>();
function classify(name: string): 0 | 1 | 2 | 3 {
  let hit = cache.get(name);
  if (hit === undefined) {
    const words = nameWords(name);
    if (endsWith(words, SECRET_ENDINGS) || endsWithSuffix(words)) hit = endsWith(words, SECRET_HEADER_ENDINGS) ? 2 : 1;
    else hit = endsWith(words, WEAK_SECRET_ENDINGS) ? 3 : 0;
    if (cache.size < 10_000) cache.set(name, hit);
  }
  return hit;
}

/** How a name judges its value: `strong` (secret whatever it holds), `weak` (see {@link weakValueLooksSecret}), or null. */
export function secretNameKind(name: string): "strong" | "weak" | null {
  const c = classify(name);
  return c === 0 ? null : c === 3 ? "weak" : "strong";
}

/**
 * True when a field, header or parameter of this name may hold a secret (strong or weak, see {@link secretNameKind}).
 * @internal used by tests; the product asks {@link secretNameKind}.
 */
export function isSecretName(name: string): boolean {
  return classify(name) !== 0;
}

/** True for header names whose value is a credential from the separator to the end of the line. */
export function isSecretHeaderName(name: string): boolean {
  return classify(name) === 2;
}

const WHITESPACE = /\s/;

/** Longest value the look-alike checks below read (a longer value is judged by its characters alone). */
export const WEAK_VALUE_CHECKED = 64;

/** Method and scheme words that hold a digit or a symbol: `auth: oauth2` is a setting, not a credential. */
const SETTING_WORDS: ReadonlySet<string> = new Set([
  "oauth1",
  "oauth2",
  "oauth2.0",
  "saml2",
  "sigv4",
  "aws-sigv4",
  "aws_sigv4",
  "hmac-sha1",
  "hmac-sha256",
  "hmac-sha512",
  "scram-sha-1",
  "scram-sha-256",
  "same-origin",
]);

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isIdentChar = (c: number) => isLetter(c) || (c >= 48 && c <= 57) || c === 95;
/** Letters, `_`, `.` and `-`: a value made only of these is a word (gitleaks' generic-api-key allow list). */
export const isPlainValueChar = (c: number) => isLetter(c) || c === 95 || c === 46 || c === 45;

/** True when `v` (at most {@link WEAK_VALUE_CHECKED} characters) is a path, an environment reference or a setting word. */
function isOrdinaryValue(v: string): boolean {
  const c0 = v.charCodeAt(0);
  const c1 = v.charCodeAt(1);
  // A path: /x, ~/x, ./x, ../x, C:\x, C:/x.
  if (c0 === 47 || (c0 === 126 && c1 === 47) || (c0 === 46 && (c1 === 47 || (c1 === 46 && v.charCodeAt(2) === 47))))
    return true;
  if (isLetter(c0) && c1 === 58 && (v.charCodeAt(2) === 92 || v.charCodeAt(2) === 47)) return true;
  // An environment reference: $NAME, ${NAME}, %NAME%.
  let from = -1;
  let to = v.length;
  if (c0 === 36 && c1 === 123 && v.charCodeAt(to - 1) === 125) [from, to] = [2, to - 1];
  else if (c0 === 36) from = 1;
  else if (c0 === 37 && v.charCodeAt(to - 1) === 37) [from, to] = [1, to - 1];
  if (from > 0 && to > from) {
    let ident = true;
    for (let k = from; ident && k < to; k++) ident = isIdentChar(v.charCodeAt(k));
    if (ident) return true;
  }
  return SETTING_WORDS.has(v.toLowerCase());
}

/**
 * Whether the value of a weak secret name (`pass`, `pwd`, `auth`, `credentials` …) is a credential: 6 or more
 * characters, no whitespace, at least one character that is not a letter, `_`, `.` or `-` (a plain word such as
 * `records-api` or `none` is a name or a setting), and not a path (`PWD=/home/app`), an environment reference
 * (`$DB_PASS`, `${DB_PASS}`, `%DB_PASS%`) or a setting word (`oauth2`, `scram-sha-256`).
 * Linear in the length of `value`. Source: decision 0027.
 */
export function weakValueLooksSecret(value: string): boolean {
  if (value.length < 6) return false;
  if (WHITESPACE.test(value)) return false;
  let plain = true;
  for (let k = 0; plain && k < value.length; k++) plain = isPlainValueChar(value.charCodeAt(k));
  if (plain) return false;
  return value.length > WEAK_VALUE_CHECKED || !isOrdinaryValue(value);
}

/** {@link weakValueLooksSecret} for a value already known to have no whitespace, from facts a scanner keeps. */
export function weakValueVerdict(length: number, hasNonPlain: boolean, head: string): boolean {
  if (length < 6 || !hasNonPlain) return false;
  return length > WEAK_VALUE_CHECKED || !isOrdinaryValue(head);
}
