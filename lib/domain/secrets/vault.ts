/**
 * The vault lane carries metadata only (docs/concepts.md#the-four-planes: "never a secret value or a placeholder for
 * one"; docs/concepts.md#redaction: events that carry one are redacted and flagged; decision 0019). On top of the
 * redaction every event gets (./redact.ts), a vault-plane event also loses:
 * - **credential values**: whatever a field named like a value holds (`value`, `plaintext`, `secret_value`, …:
 *   {@link VAULT_VALUE_KEYS}), whatever its shape (`credential_value`);
 * - **environment templates** (`${env:X}`, `{{ env.X }}`: `vault_placeholder`), which are ordinary text on other
 *   planes; every other placeholder of a secret manager or a template (`{{vault:kv/x}}`, `${secrets.X}`,
 *   `op://vault/item/field` …) is redacted on every plane (./scan.ts, decision 0027).
 * Linear in the text, like the scanner (decision 0008): one pass per string, no regular expression on the text.
 */
import { formatPath } from "../json/text";
import type { Redaction } from "./redact";
import { applySpans, findVaultLanePlaceholders, REDACTED, type SecretSpan } from "./scan";

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

/**
 * A superset test over an event's serialized attrs (as `JSON.stringify` writes them: letters are never escaped): false
 * means {@link redactVaultAttrs} would change nothing, so the ingest hot path may keep the event as it is.
 */
export function mayHoldVaultValue(attrsJson: string): boolean {
  return /value|secret|plaintext|cleartext|\{\{|\$\{|op:\/\/|\\u/i.test(attrsJson);
}

/**
 * Placeholders in one string as the vault lane reads them: every placeholder the scan finds on every plane
 * (./scan.ts: `{{vault:…}}`, `${secrets.X}`, `op://…`, `arn:aws:secretsmanager:…` …), and environment templates
 * (`${env:X}`, `{{ env.X }}`), which are ordinary text elsewhere. Linear in the text (decision 0008).
 */
export function findVaultPlaceholders(text: string): SecretSpan[] {
  return findVaultLanePlaceholders(text);
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
