/**
 * A tenant's policy document (docs/concepts.md#policy-versions-and-lint): what the sandbox may reach (`network`), which
 * credentials a proxy or the application supplies and to which hosts (`credentials`), and which tools write
 * (`tools`). Read from JSON or YAML text; shape problems come back as lint findings at their field path
 * (`credentials[0].allowed_hosts[0]`), so one answer lists everything that is wrong.
 */
import YAML from "yaml";
import { z } from "zod";
import type { PolicyFinding, StoredPolicyDocument } from "@/db/schema/policies";
import { DomainError } from "../errors";
import { formatPath, inexactNumber, parseJsonText } from "../json/text";
import { LIMITS, type BoundaryLimit } from "../limits";
import { redactString, refuseSecrets } from "../secrets/redact";
import { MAX_JSON_DEPTH, unstorableJson } from "../events/redact";
import { unsafeTextReason } from "../typed-text";
import { identifierProblem } from "../names";

/** The largest policy document accepted, in bytes of text. */
export const MAX_POLICY_BYTES = 256 * 1024;

/** A credential or tool name: the names events and intents use for them (lib/domain/limits.ts). */
const name = (field: string, limit: BoundaryLimit) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(limit.max, `${field} is too long (at most ${limit.max} characters)`)
    .superRefine((v, ctx) => {
      const why = unsafeTextReason(v);
      if (why) ctx.addIssue({ code: "custom", message: `${field} ${why}` });
    });

/** A host list entry is checked by lint (exact names); the schema only wants text. */
const hostText = z
  .string({ error: "a host must be a string, e.g. records.example.com" })
  .max(400, "a host is at most 400 characters");
const hostList = z.array(hostText).max(500, "at most 500 hosts per list");

/** A duration: seconds as a number, or text such as `15m`, `24h`, `7d`. */
const duration = z.union([
  z
    .number()
    .int()
    .positive()
    .max(366 * 24 * 3600),
  z.string().regex(/^\d{1,6}(s|m|h|d)$/, "a duration is a number of seconds or text like 15m, 24h, 7d"),
]);

/** Seconds in a policy duration (a number of seconds, or text like `15m`, `24h`, `7d` as {@link duration} admits). */
export function durationSeconds(d: number | string): number {
  if (typeof d === "number") return d;
  const unit = d.slice(-1);
  const n = Number(d.slice(0, -1));
  return n * (unit === "d" ? 86_400 : unit === "h" ? 3_600 : unit === "m" ? 60 : 1);
}

const url = z.string().max(2000).url("must be an absolute URL, e.g. https://tools.example.com/revocations");

export const policyDocumentSchema = z
  .object({
    network: z
      .object({
        access: z.enum(["none", "restricted", "open"], {
          error: "network.access must be one of none, restricted, open",
        }),
        allowed_domains: hostList.default([]),
      })
      .strict(),
    credentials: z
      .array(
        z
          .object({
            name: name("the credential name", LIMITS.credentialRef),
            type: z.enum(["environment_variable", "function_tool"], {
              error:
                "type must be environment_variable (a proxy supplies it to the sandbox) or function_tool (the application keeps it)",
            }),
            allowed_hosts: hostList.default([]),
            scope: z.string().max(400).optional(),
            ttl: duration.optional(),
            /** How the proxy reaches the hosts (HTTPS on 443 or 8443 are the only transports a credential may use). */
            protocol: z.string().max(20).default("https"),
            port: z.number().int().min(1).max(65535).default(443),
            /** The tool owner's revocation endpoint, asked by "Test revocation" (optional). */
            revocation_url: url.optional(),
          })
          .strict(),
      )
      .max(200)
      .default([]),
    tools: z
      .array(
        z
          .object({
            name: name("the tool name", LIMITS.toolName).superRefine((v, ctx) => {
              const why = identifierProblem(v, LIMITS.toolName);
              if (why) ctx.addIssue({ code: "custom", message: `the tool name ${why}` });
            }),
            mutation: z.boolean({ error: "mutation must be true or false: does the tool write outside the sandbox?" }),
            requires_approval: z.boolean().default(false),
            approval_ttl: duration.optional(),
            /** The hosts the tool calls: the purpose that justifies an allowed domain. */
            hosts: hostList.default([]),
            lookup_url: url.optional(),
          })
          .strict(),
      )
      .max(500)
      .default([]),
    /**
     * Spending limits (decision 0033): per principal and period, the most the writes of an action may spend in one
     * currency; a write over what remains needs an approval.
     */
    spending_limits: z
      .array(
        z
          .object({
            action: name("the action", LIMITS.actionName).superRefine((v, ctx) => {
              const why = identifierProblem(v, LIMITS.actionName);
              if (why) ctx.addIssue({ code: "custom", message: `the action ${why}` });
            }),
            amount: z.number().positive("amount must be more than 0").max(1e12),
            currency: z.string().regex(/^[A-Z]{3}$/, "currency must be an ISO 4217 code such as EUR"),
            period: duration,
            per: z.literal("principal").default("principal"),
          })
          .strict(),
      )
      .max(200)
      .optional(),
  })
  .strict();

export type PolicyDocument = z.infer<typeof policyDocumentSchema>;

// The column type restates this schema's output (db imports nothing from lib): a change to one that the other does not
// follow fails to compile here.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type _StoredAsParsed = Assert<Same<PolicyDocument, StoredPolicyDocument>>;
type Assert<T extends true> = T;

/** One lint finding; `path` is like `credentials[0].allowed_hosts[0]` (empty for the whole document). */
export type { PolicyFinding };

/** A document read from text: the parsed value when its shape is right, and the shape findings otherwise. */
export type ParsedPolicy = { document: PolicyDocument; findings: [] } | { document: null; findings: PolicyFinding[] };

/**
 * Reads a policy document from text. `format` is `yaml` or `json` (YAML is a superset of JSON, so `yaml` reads
 * both; the format only decides which parser names the problem).
 * @returns the document, or `document: null` with one `schema` finding per field that has the wrong shape.
 * @throws DomainError payload_too_large (over {@link MAX_POLICY_BYTES}), invalid_json (text that is not a JSON or
 *   YAML document, or a YAML document using anchors/aliases more than 100 times); validation_failed (422, naming the
 *   path; nothing is stored) for what could not be kept as sent — a number a double cannot carry exactly (`1e400`,
 *   `.inf`, `-.inf`, `.nan`, a 30-digit integer), a key repeated in one object, a document that is not an object — for
 *   the keys `__proto__`, `constructor` and `prototype`, refused anywhere, and for a value shaped like a credential.
 *   The numbers rule is decision 0009's, for every JSON body.
 */
export function readPolicyText(text: string, format: "json" | "yaml"): ParsedPolicy {
  if (Buffer.byteLength(text, "utf8") > MAX_POLICY_BYTES) {
    throw new DomainError("payload_too_large", `A policy document is at most ${MAX_POLICY_BYTES / 1024} KiB.`);
  }
  // The text is kept as sent (comments included): what PostgreSQL cannot store anywhere in it is refused (a raw NUL in a
  // comment), and so is a credential, never stored.
  const unstorableText = unstorableJson(text);
  if (unstorableText) throw new DomainError("validation_failed", `The policy text ${unstorableText}; remove it.`);
  const secretKinds = redactString(text).kinds;
  if (secretKinds.length) {
    throw new DomainError(
      "validation_failed",
      `The policy text holds what looks like a credential value (${secretKinds[0]}); policies are kept for good and shown to every role: name the credential and keep its value in your vault.`,
    );
  }
  let value: unknown;
  if (format === "json") {
    // As for every JSON body (lib/server/route.ts readJson): nesting, numbers a double cannot carry, `__proto__`,
    // repeated keys.
    const read = parseJsonText(text, MAX_JSON_DEPTH);
    if ("invalid" in read)
      throw new DomainError(
        "invalid_json",
        "The policy is not valid JSON; send JSON, or YAML with content-type application/yaml.",
      );
    if ("problem" in read) throw policyValueError(read.problem.path, read.problem.message);
    value = read.value;
  } else {
    const doc = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: true, strict: true });
    const problem = doc.errors[0];
    if (problem) {
      const line = problem.linePos?.[0];
      throw new DomainError(
        "invalid_json",
        `The policy is not valid YAML${line ? ` (line ${line.line}, column ${line.col})` : ""}: ${problem.code.toLowerCase().replace(/_/g, " ")}.`,
      );
    }
    const number = yamlNumberProblem(doc);
    if (number) throw policyValueError(number.path, number.message);
    try {
      value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    } catch {
      throw new DomainError("invalid_json", "The policy's YAML uses aliases too many times; write the values out.");
    }
  }
  return readPolicyValue(value);
}

/** Like {@link readPolicyText}, for a value already parsed from a JSON body. */
export function readPolicyValue(value: unknown): ParsedPolicy {
  const forbidden = forbiddenKeyPath(value);
  if (forbidden !== null) {
    throw new DomainError("validation_failed", `${forbidden || "The policy"} uses a reserved key name; rename it.`, {
      fields: [{ path: forbidden, message: "reserved key name" }],
    });
  }
  // Escapes in the text (`"\ud83c"` in JSON or YAML) can make strings PostgreSQL cannot store (a NUL, a lone surrogate).
  const unstorable = unstorableJson(value);
  if (unstorable)
    throw new DomainError("validation_failed", `The policy ${unstorable}; write the text without that escape.`);
  // Policy versions are kept for good and shown to every role: a credential value in one is refused, never stored.
  refuseSecrets(value, "A policy document", "name the credential and keep its value in your vault");
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    throw new DomainError(
      "validation_failed",
      `The policy must be an object with network, credentials and tools, not ${got}.`,
      { fields: [{ path: "", message: `must be an object, not ${got}` }] },
    );
  }
  const parsed = policyDocumentSchema.safeParse(value);
  if (parsed.success) return { document: parsed.data, findings: [] };
  return {
    document: null,
    findings: parsed.error.issues.map((i) => {
      const path = formatPath(i.path.map((p) => (typeof p === "number" ? p : String(p))));
      return { severity: "error" as const, rule: "schema", path, message: schemaMessage(path, i) };
    }),
  };
}

function schemaMessage(path: string, issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}; remove ${issue.keys.length > 1 ? "them" : "it"}`;
  }
  if (issue.code === "invalid_type" && issue.message.startsWith("Invalid input")) {
    return /received undefined/.test(issue.message)
      ? `${path} is required (${String(issue.expected)})`
      : `${path} must be ${String(issue.expected)}`;
  }
  return issue.message.startsWith(path) || !path ? issue.message : `${path}: ${issue.message}`;
}

/** The 422 for a value of the text that cannot be kept as sent, naming its path (the whole policy when empty). */
function policyValueError(path: string, message: string): DomainError {
  return new DomainError("validation_failed", `${path || "The policy"} ${message}.`, { fields: [{ path, message }] });
}

/** A decimal number as YAML's core schema writes one (a `+` sign and a leading `.` allowed). */
const YAML_DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
/** An integer in YAML's hexadecimal or octal form. */
const YAML_RADIX = /^0x[0-9a-f]+$|^0o[0-7]+$/i;

/**
 * The first number of a YAML document that JSON cannot carry as written, with its path: `.inf`, `-.inf`, `.nan`,
 * `1e400`, or a value a double cannot hold exactly (a 30-digit integer, `0x` digits past 2^53) — the numbers
 * {@link checkJsonText} refuses in JSON. Another written form (YAML 1.1's `1_000`, `0b101`, `1:20`) counts when its
 * value is an integer past 2^53. A number used as a key counts too (it becomes the key's text).
 */
function yamlNumberProblem(doc: YAML.Document): { path: string; message: string } | null {
  let found: { path: string; message: string } | null = null;
  YAML.visit(doc, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== "number") return;
      const value = node.value;
      const written = node.source ?? String(value);
      const becomes = !Number.isFinite(value)
        ? String(value)
        : YAML_DECIMAL.test(written)
          ? inexactNumber(written.replace(/^\+/, ""))
          : YAML_RADIX.test(written)
            ? BigInt(written.toLowerCase()) === BigInt(value)
              ? null
              : String(value)
            : Number.isInteger(value) && !Number.isSafeInteger(value)
              ? String(value)
              : null;
      if (becomes === null) return;
      found = {
        path: yamlPath(ancestors, node),
        message: `is the number ${written.slice(0, 40)}, which cannot be kept exactly (it would become ${becomes}); write it as a string`,
      };
      return YAML.visit.BREAK;
    },
  });
  return found;
}

/** The path of `node`, reached through `ancestors` as YAML.visit passes them: `tools[0].name`. */
function yamlPath(ancestors: readonly unknown[], node: unknown): string {
  const segments: Array<string | number> = [];
  const chain = [...ancestors, node];
  for (let i = 0; i < chain.length - 1; i++) {
    const parent = chain[i];
    const child = chain[i + 1];
    if (YAML.isSeq(parent)) segments.push(parent.items.indexOf(child as never));
    else if (YAML.isPair(parent) && child === parent.value) {
      const key = parent.key;
      segments.push(YAML.isScalar(key) ? String(key.value) : String(key));
    }
  }
  return formatPath(segments);
}

const RESERVED_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** The path of the first reserved key in `value` (walked without recursion), or null. */
function forbiddenKeyPath(value: unknown): string | null {
  const stack: Array<{ v: unknown; path: Array<string | number>; depth: number }> = [{ v: value, path: [], depth: 0 }];
  while (stack.length) {
    const { v, path, depth } = stack.pop()!;
    if (depth > 32) throw new DomainError("validation_failed", "The policy nests deeper than 32 levels.");
    if (Array.isArray(v)) v.forEach((item, i) => stack.push({ v: item, path: [...path, i], depth: depth + 1 }));
    else if (v !== null && typeof v === "object") {
      for (const k of Object.keys(v)) {
        if (RESERVED_KEYS.has(k)) return formatPath([...path, k]);
        stack.push({ v: (v as Record<string, unknown>)[k], path: [...path, k], depth: depth + 1 });
      }
    }
  }
  return null;
}
