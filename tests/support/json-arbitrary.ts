/**
 * fast-check arbitraries for request bodies: valid-looking bodies generated from a route's zod schema (through its
 * JSON Schema, as the OpenAPI document is made), and mutations of them that input built to hurt would try — wrong
 * types, huge and empty strings, NUL and lone surrogates, invisible and bidirectional characters, deep nesting,
 * extra and prototype keys, repeated keys, numbers at the edges of what JSON can carry, planted credentials.
 *
 * A generated body is JSON text (`raw`): mutations that a JS value cannot express (`1e400`, `"__proto__"` as a
 * key, a key twice, 5,000 levels of nesting) are written into the text through markers.
 */
import fc from "fast-check";
import { z } from "zod";

type JsonSchema = Record<string, unknown>;

/** Any JSON value, small. */
const anyJson = (): fc.Arbitrary<unknown> =>
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

/** ISO times around now (most plausible, some not). */
const isoTime = fc.oneof(
  fc.integer({ min: -7 * 86_400_000, max: 3_600_000 }).map((d) => new Date(Date.now() + d).toISOString()),
  fc.constantFrom(
    "2026-11-29T10:00:00+02:00",
    "2025-12-31T23:59:60Z",
    "2025-12-31T23:59:59.999999999Z",
    "2025-12-31T10:00:00",
    "1999-01-01T00:00:00Z",
  ),
);

/** An arbitrary for values of a JSON Schema as zod 4 writes them (`z.toJSONSchema(…, { io: "input" })`). */
export function fromJsonSchema(s: JsonSchema | undefined): fc.Arbitrary<unknown> {
  if (!s || Object.keys(s).filter((k) => k !== "default" && k !== "$schema").length === 0) return anyJson();
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const options = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (options) return fc.oneof(...options.map((o) => fromJsonSchema(o)));
  switch (s.type) {
    case "string": {
      if (s.format === "date-time") return isoTime;
      if (s.format === "uri")
        return fc.constantFrom("http://127.0.0.1:9/lookup", "https://records.invalid/lookup", "http://[::1]:9/x");
      const min = (s.minLength as number | undefined) ?? 0;
      const max = Math.max(min, Math.min((s.maxLength as number | undefined) ?? 24, 24));
      if (typeof s.pattern === "string")
        return fc
          .stringMatching(new RegExp(s.pattern))
          .filter((v) => v.length >= min && v.length <= ((s.maxLength as number | undefined) ?? Infinity));
      return fc.string({ minLength: min, maxLength: max, unit: "grapheme" });
    }
    case "integer":
      return fc.integer({
        min: Math.max((s.minimum as number | undefined) ?? -1_000_000, -1_000_000),
        max: Math.min((s.maximum as number | undefined) ?? 1_000_000, 1_000_000),
      });
    case "number":
      return fc.double({
        min: (s.minimum as number | undefined) ?? -1e6,
        max: (s.maximum as number | undefined) ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(fromJsonSchema(s.items as JsonSchema), {
        minLength: (s.minItems as number | undefined) ?? 0,
        maxLength: Math.min((s.maxItems as number | undefined) ?? 3, 3),
      });
    case "object": {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fromJsonSchema(v)])), {
        requiredKeys: (s.required as string[] | undefined) ?? [],
      });
      const extra = s.additionalProperties;
      if (extra && typeof extra === "object") {
        const keys = fromJsonSchema({
          type: "string",
          ...((s.propertyNames as JsonSchema | undefined) ?? {}),
        }) as fc.Arbitrary<string>;
        const dict = fc.dictionary(keys, fromJsonSchema(extra as JsonSchema), { maxKeys: 3 });
        return fc.tuple(record, dict).map(([r, d]) => ({ ...d, ...(r as object) }));
      }
      return record;
    }
    default:
      return anyJson();
  }
}

/** Valid-looking bodies of a zod schema. */
export function bodiesOf(schema: z.ZodType): fc.Arbitrary<unknown> {
  const { $schema: _ignored, ...js } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  return fromJsonSchema(js);
}

/** A marker string that {@link toText} replaces by raw JSON text (a token a JS value cannot hold). */
const raw = (text: string) => `\u0001R:${text}\u0001`;
/** A marker key that {@link toText} replaces by the key `name` (`__proto__`, or a key already present). */
const rawKey = (name: string) => `\u0001K:${name}\u0001`;

/** JSON text of a body, with the markers replaced. */
export function toText(value: unknown): string {
  return JSON.stringify(value)
    .replace(/"\\u0001R:([^"\\]*)\\u0001"/g, "$1")
    .replace(/"\\u0001K:([^"\\]*)\\u0001"/g, (_m, k: string) => JSON.stringify(k));
}

export const EDGE_NUMBERS = [
  "1e400",
  "-1e400",
  "1e-400",
  "9007199254740993",
  "-9007199254740993",
  "1234567890123456789",
  "-0",
  "0.1",
  "5e-324",
  "1.7976931348623157e308",
  "1e308",
  "-1",
  "0",
];
export const UNUSUAL_CHARACTERS = [
  "\u0000",
  "\ud800",
  "\udfff",
  "\u200b",
  "\u2060",
  "\u200d",
  "\u202e",
  "\u2066",
  "\ufeff",
  "\u00ad",
  "\u0007",
  "\u2028",
  "\u061c",
];
const HUGE = ["a".repeat(200_000), "apikey=".repeat(30_000), "\u00e9".repeat(100_000), "\ud83d\ude80".repeat(50_000)];
const WRONG_TYPES: unknown[] = [null, true, false, 0, -1, 1.5, "", "x", [], {}, [null], { a: 1 }];
const EXTRA_KEYS = ["extra", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"];

/** A node of a JSON value and a way to replace it. */
type Slot = { get: () => unknown; set: (v: unknown) => void; parent: unknown };

function slots(root: { v: unknown }): Slot[] {
  const out: Slot[] = [{ get: () => root.v, set: (v) => (root.v = v), parent: null }];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => {
        out.push({ get: () => node[i], set: (v) => (node[i] = v), parent: node });
        visit(child);
      });
    } else if (node && typeof node === "object") {
      for (const k of Object.keys(node)) {
        const obj = node as Record<string, unknown>;
        out.push({ get: () => obj[k], set: (v) => (obj[k] = v), parent: obj });
        visit(obj[k]);
      }
    }
  };
  visit(root.v);
  return out;
}

export type Mutation = { name: string; apply: (node: unknown, secret: string) => unknown };

/** The mutations applied to one node of a body. `secret` is a credential unique to the case, planted by some. */
export const MUTATIONS: Mutation[] = [
  { name: "wrong type", apply: (_n, _s) => WRONG_TYPES[Math.floor(Math.random() * WRONG_TYPES.length)] },
  { name: "huge string", apply: () => HUGE[Math.floor(Math.random() * HUGE.length)] },
  { name: "empty string", apply: () => "" },
  {
    name: "unusual character",
    apply: (n) => {
      const c = UNUSUAL_CHARACTERS[Math.floor(Math.random() * UNUSUAL_CHARACTERS.length)]!;
      return typeof n === "string" ? `${n.slice(0, 1)}${c}${n.slice(1)}` : c;
    },
  },
  { name: "deep nesting", apply: () => raw(`${"[".repeat(600)}1${"]".repeat(600)}`) },
  { name: "very deep nesting", apply: () => raw(`${"[".repeat(5000)}1${"]".repeat(5000)}`) },
  {
    name: "just too deep",
    apply: (n) => {
      let v: unknown = n;
      for (let i = 0; i < 34; i++) v = { d: v };
      return v;
    },
  },
  {
    name: "extra or prototype key",
    apply: (n) => {
      const base = n && typeof n === "object" && !Array.isArray(n) ? { ...(n as object) } : {};
      const key =
        Math.random() < 0.4 ? rawKey("__proto__") : EXTRA_KEYS[Math.floor(Math.random() * EXTRA_KEYS.length)]!;
      return { ...base, [key]: Math.random() < 0.5 ? {} : 1 };
    },
  },
  {
    name: "repeated key",
    apply: (n) => {
      if (!n || typeof n !== "object" || Array.isArray(n) || Object.keys(n).length === 0) return n;
      const k = Object.keys(n)[0]!;
      return { ...(n as object), [rawKey(k)]: 1 };
    },
  },
  { name: "edge number", apply: () => raw(EDGE_NUMBERS[Math.floor(Math.random() * EDGE_NUMBERS.length)]!) },
  { name: "planted credential", apply: (n, secret) => (typeof n === "string" ? `${n} ${secret}` : secret) },
  {
    name: "credential as a key",
    apply: (n, secret) => ({
      ...(n && typeof n === "object" && !Array.isArray(n) ? (n as object) : {}),
      [secret]: "x",
    }),
  },
  {
    name: "credential in a secret field",
    apply: (n, secret) => ({
      ...(n && typeof n === "object" && !Array.isArray(n) ? (n as object) : {}),
      password: `plain ${secret.slice(4)}`,
    }),
  },
  {
    name: "credential in JSON held as a string",
    apply: (_n, secret) => JSON.stringify({ arguments: { api_key: `plain ${secret.slice(4)}` } }),
  },
  {
    name: "removed field",
    apply: (n) => {
      if (!n || typeof n !== "object" || Array.isArray(n)) return n;
      const copy = { ...(n as Record<string, unknown>) };
      delete copy[Object.keys(copy)[0] ?? ""];
      return copy;
    },
  },
];

/** Bodies that are not what any route reads at all. */
export const WHOLE_BODIES = [
  "",
  "{",
  "[]",
  "null",
  "0",
  '"text"',
  "[{}]",
  `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
  "{}",
  "\ufeff{}",
];

/**
 * The body of one case: a valid-looking body, or it with one mutation at one node (most cases), or a whole body
 * that is not what the route reads. Returns the JSON text and the credential planted in it, if any.
 */
export function casesOf(
  valid: fc.Arbitrary<unknown>,
): fc.Arbitrary<{ text: string; secret: string; mutation: string }> {
  const secret = fc.stringMatching(/^[A-Za-z0-9]{36}$/).map((s) => `ghp_${s}`);
  const mutated = fc
    .tuple(valid, fc.nat(), fc.nat({ max: MUTATIONS.length - 1 }), secret, fc.integer())
    .map(([body, at, which, sec, seed]) => {
      const root = { v: structuredClone(body) };
      const all = slots(root);
      const slot = all[at % all.length]!;
      const m = MUTATIONS[which]!;
      // Math.random inside a mutation picks among variants; seed it per case so a shrunk case replays.
      const rnd = mulberry(seed);
      const real = Math.random;
      Math.random = rnd;
      try {
        slot.set(m.apply(slot.get(), sec));
      } finally {
        Math.random = real;
      }
      // Every planted form holds the token's 36 characters: look for those.
      return { text: toText(root.v), secret: m.name.includes("credential") ? sec.slice(4) : "", mutation: m.name };
    });
  return fc.oneof(
    { weight: 2, arbitrary: valid.map((b) => ({ text: toText(b), secret: "", mutation: "none" })) },
    { weight: 8, arbitrary: mutated },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...WHOLE_BODIES).map((text) => ({ text, secret: "", mutation: "whole body" })),
    },
  );
}

/** A small seeded generator (mulberry32). */
function mulberry(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
