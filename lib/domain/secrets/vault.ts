/**
 * The vault lane carries metadata only (docs/concepts.md#the-four-planes: "never a secret value or a placeholder for
 * one"; docs/concepts.md#redaction: events that carry one are redacted and flagged; decision 0019). On top of the
 * redaction every event gets (./redact.ts), a vault-plane event also loses:
 * - **credential values**: whatever a field named like a value holds (`value`, `plaintext`, `secret_value`, …:
 *   {@link VAULT_VALUE_KEYS}), whatever its shape (`credential_value`);
 * - **placeholders** a secret manager or a template would fill in (`vault_placeholder`): `{{vault:kv/x}}`,
 *   `{{ secrets.X }}`, `${secrets.X}`, `${{ secrets.X }}`, `${env:X}`, `op://vault/item/field` (`vault://…` is a
 *   placeholder on every plane, ./scan.ts).
 * Linear in the text, like the scanner (decision 0008): one pass per string, no regular expression on the text.
 */
import { formatPath } from "../json/text";
import type { Redaction } from "./redact";
import { applySpans, REDACTED, type SecretSpan } from "./scan";

/** Field names (lower case, without `-`, `_`, `.` and spaces) whose value is a credential value on the vault lane. */
export const VAULT_VALUE_KEYS: ReadonlySet<string> = new Set([
  "value",
  "values",
  "plaintext",
  "cleartext",
  "credentialvalue",
  "secretvalue",
  "rawvalue",
  "secret",
  "rawsecret",
  "envvalue",
]);

/** What a template placeholder starts with for it to name a secret (`{{vault:…}}`, `${secrets.X}`, `${env:X}` …). */
const PLACEHOLDER_HEADS: ReadonlySet<string> = new Set([
  "vault",
  "secret",
  "secrets",
  "env",
  "op",
  "kv",
  "ssm",
  "keyvault",
  "credential",
  "credentials",
]);

/**
 * A superset test over an event's serialized attrs (as `JSON.stringify` writes them: letters are never escaped): false
 * means {@link redactVaultAttrs} would change nothing, so the ingest hot path may keep the event as it is.
 */
export function mayHoldVaultValue(attrsJson: string): boolean {
  return /value|secret|plaintext|cleartext|\{\{|\$\{|op:\/\/|\\u/i.test(attrsJson);
}

const isSpaceCode = (c: number) => c === 32 || (c >= 9 && c <= 13);
const isIdent = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
const isWord = (c: number) => isIdent(c) || (c >= 48 && c <= 57);
/** Ends an unterminated placeholder or an `op://` reference. */
const endsRef = (c: number) => isSpaceCode(c) || c === 34 || c === 39 || c === 60 || c === 62 || Number.isNaN(c);

/**
 * Placeholders in one string: `{{ head… }}` / `${ head… }` / `${{ head… }}` whose first word is a secret source
 * ({@link PLACEHOLDER_HEADS}), and `op://…` references. Each character is looked at a bounded number of times: a
 * failed candidate resumes after what it read, a found one after its end, and the search for a closing `}` is
 * remembered once it fails.
 */
export function findVaultPlaceholders(text: string): SecretSpan[] {
  const spans: SecretSpan[] = [];
  const n = text.length;
  let noCloseFrom = n + 1;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if ((c === 123 || c === 36) && next === 123) {
      // `{{`, `${`, `${{`: braces, spaces, then the first word.
      let j = i + 2;
      while (j < n && j < i + 4 && text.charCodeAt(j) === 123) j++;
      while (j < n && isSpaceCode(text.charCodeAt(j))) j++;
      const wordStart = j;
      while (j < n && isIdent(text.charCodeAt(j))) j++;
      const head = text.slice(wordStart, Math.min(j, wordStart + 16)).toLowerCase();
      if (j === wordStart || j - wordStart > 16 || !PLACEHOLDER_HEADS.has(head)) {
        i = Math.max(i + 1, j);
        continue;
      }
      let end: number;
      const close = j < noCloseFrom ? text.indexOf("}", j) : -1;
      if (close === -1) {
        noCloseFrom = Math.min(noCloseFrom, j);
        end = j;
        while (end < n && !endsRef(text.charCodeAt(end))) end++;
      } else {
        end = close + 1;
        while (end < n && end < close + 3 && text.charCodeAt(end) === 125) end++;
      }
      spans.push({ start: i, end, kind: "vault_placeholder" });
      i = end;
      continue;
    }
    if (c === 111 && text.startsWith("op://", i) && (i === 0 || !isWord(text.charCodeAt(i - 1)))) {
      let end = i + 5;
      while (end < n && !endsRef(text.charCodeAt(end))) end++;
      if (end > i + 5) {
        spans.push({ start: i, end, kind: "vault_placeholder" });
        i = end;
        continue;
      }
    }
    i++;
  }
  return spans;
}

const normKey = (k: string) => k.toLowerCase().replace(/[-_. ]/g, "");

/**
 * The vault lane's own redaction of an event's attrs (already passed through ./redact.ts): credential values and
 * placeholders become `[REDACTED]`. The input is never modified.
 * @returns the attrs to store and what was redacted where (`credential_value`, `vault_placeholder`).
 */
export function redactVaultAttrs(attrs: Record<string, unknown>): {
  value: Record<string, unknown>;
  redactions: Redaction[];
} {
  const redactions: Redaction[] = [];
  const path: Array<string | number> = [];

  const walk = (node: unknown, isValue: boolean, depth: number): unknown => {
    if (depth > 64) return node;
    if (typeof node === "string") {
      if (isValue) {
        if (node.length === 0 || node === REDACTED) return node;
        redactions.push({ path: formatPath(path), kind: "credential_value" });
        return REDACTED;
      }
      const spans = node.length >= 5 ? findVaultPlaceholders(node) : [];
      if (!spans.length) return node;
      for (const s of spans) redactions.push({ path: formatPath(path), kind: s.kind });
      return applySpans(node, spans);
    }
    if (typeof node === "number") {
      if (!isValue) return node;
      redactions.push({ path: formatPath(path), kind: "credential_value" });
      return REDACTED;
    }
    if (node === null || typeof node !== "object") return node;
    if (Array.isArray(node)) {
      let copy: unknown[] | null = null;
      node.forEach((item, i) => {
        path.push(i);
        const v = walk(item, isValue, depth + 1);
        path.pop();
        if (v !== item) (copy ??= node.slice())[i] = v;
      });
      return copy ?? node;
    }
    const obj = node as Record<string, unknown>;
    let copy: Record<string, unknown> | null = null;
    for (const k of Object.keys(obj)) {
      path.push(k);
      const v = walk(obj[k], isValue || VAULT_VALUE_KEYS.has(normKey(k)), depth + 1);
      path.pop();
      if (v !== obj[k]) {
        copy ??= { ...obj };
        if (k === "__proto__")
          Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
        else copy[k] = v;
      }
    }
    return copy ?? node;
  };

  const value = walk(attrs, false, 0) as Record<string, unknown>;
  return { value, redactions };
}
