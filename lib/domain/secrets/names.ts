/**
 * Names that say their value is a secret: a JSON field (`"password": …`), a header (`Cookie: …`, `["X-Api-Key",
 * "…"]`), a query or form parameter (`?access_token=…`), an assignment (`DB_PASSWORD=…`).
 *
 * A name is split into words at `-`, `_`, `.` and spaces and at camelCase boundaries (`sessionToken` →
 * session, token; `APIKey` → api, key), lower-cased, and is secret when its last words are one of
 * {@link SECRET_ENDINGS}: `db_password`, `X-Api-Key`, `github_token`, `Set-Cookie`, `clientSecret`. Names that only
 * contain such a word keep their value: `token_count`, `input_tokens`, `secret_name`, `password_policy`,
 * `credential_id`, `tokenizer`, `aws_access_key_id`.
 * Source: decision 0008 (header pairs, secret fields of any type); word list after the field names
 * gitleaks' generic rule and secretlint's presets look for.
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

/** 0: not secret, 1: secret, 2: secret header (value to the end of the line). Cached: names repeat. */
const cache = new Map<string, 0 | 1 | 2>();
function classify(name: string): 0 | 1 | 2 {
  let hit = cache.get(name);
  if (hit === undefined) {
    const words = nameWords(name);
    hit = endsWith(words, SECRET_ENDINGS) ? (endsWith(words, SECRET_HEADER_ENDINGS) ? 2 : 1) : 0;
    if (cache.size < 10_000) cache.set(name, hit);
  }
  return hit;
}

/** True when a field, header or parameter of this name holds a secret whatever its value looks like. */
export function isSecretName(name: string): boolean {
  return classify(name) !== 0;
}

/** True for header names whose value is a credential from the separator to the end of the line. */
export function isSecretHeaderName(name: string): boolean {
  return classify(name) === 2;
}
