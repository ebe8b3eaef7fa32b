/**
 * Collapsible, read-only JSON tree for event attributes. Objects and arrays fold with native
 * `<details>` (keyboard and screen-reader friendly); `[REDACTED]` markers are highlighted.
 */
import { Fragment } from "react";
import { REDACTED_MARKER, countRedactedValues } from "./model";
import { StatusIcon } from "./parts";

/** Props of `JsonTree`: the value, and how many levels start unfolded (default 2). */
export type JsonTreeProps = { value: unknown; openDepth?: number };

/** Renders a JSON value as a tree. Props: see `JsonTreeProps`. */
export function JsonTree({ value, openDepth = 2 }: JsonTreeProps) {
  const isContainer = value !== null && typeof value === "object";
  if (isContainer && Object.keys(value).length === 0) {
    return (
      <p className="font-mono text-xs text-neutral-500 dark:text-neutral-400">
        {Array.isArray(value) ? "[]" : "{}"} (empty)
      </p>
    );
  }
  return (
    <div className="overflow-x-auto font-mono text-xs leading-5">
      {isContainer ? <Entries value={value} depth={0} openDepth={openDepth} /> : <Scalar value={value} />}
    </div>
  );
}

function Entries({ value, depth, openDepth }: { value: object; depth: number; openDepth: number }) {
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value);
  return (
    <ul className={depth > 0 ? "ml-3 border-l border-neutral-200 pl-2 dark:border-neutral-800" : ""}>
      {entries.map(([key, v]) => (
        <li key={key}>
          <Node name={key} value={v} depth={depth + 1} openDepth={openDepth} indexed={Array.isArray(value)} />
        </li>
      ))}
    </ul>
  );
}

function Node({
  name,
  value,
  depth,
  openDepth,
  indexed,
}: {
  name: string;
  value: unknown;
  depth: number;
  openDepth: number;
  indexed: boolean;
}) {
  const keyLabel = (
    <span className={indexed ? "text-neutral-400 dark:text-neutral-500" : "text-neutral-500 dark:text-neutral-400"}>
      {name}:
    </span>
  );
  if (value !== null && typeof value === "object") {
    const size = Object.keys(value).length;
    const redacted = countRedactedValues(value);
    const brackets = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
    if (size === 0) {
      return (
        <span>
          {keyLabel} <span className="text-neutral-500">{brackets.join("")}</span>
        </span>
      );
    }
    return (
      <details open={depth < openDepth} className="group">
        <summary className="cursor-pointer rounded-sm marker:text-neutral-400 hover:bg-neutral-100 focus-visible:outline-2 focus-visible:outline-sky-600 dark:hover:bg-neutral-800">
          {keyLabel}{" "}
          <span className="text-neutral-500 dark:text-neutral-400">
            {brackets[0]}
            {size} {Array.isArray(value) ? (size === 1 ? "item" : "items") : size === 1 ? "key" : "keys"}
            {brackets[1]}
          </span>
          {redacted > 0 ? (
            <span className="ml-2 rounded bg-amber-100 px-1 text-amber-900 dark:bg-amber-900/60 dark:text-amber-100">
              {redacted} redacted
            </span>
          ) : null}
        </summary>
        <Entries value={value} depth={depth} openDepth={openDepth} />
      </details>
    );
  }
  return (
    <span className="break-all">
      {keyLabel} <Scalar value={value} />
    </span>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (typeof value === "string") {
    if (!value.includes(REDACTED_MARKER)) {
      return <span className="text-neutral-900 dark:text-neutral-100">&quot;{value}&quot;</span>;
    }
    const pieces = value.split(REDACTED_MARKER);
    return (
      <span className="text-neutral-900 dark:text-neutral-100">
        &quot;
        {pieces.map((piece, i) => (
          <Fragment key={i}>
            {piece}
            {i < pieces.length - 1 ? (
              <mark
                data-testid="redacted-value"
                title="Redacted before storage"
                className="inline-flex items-center gap-0.5 rounded bg-amber-200 px-1 text-amber-950 ring-1 ring-amber-400 dark:bg-amber-800 dark:text-amber-50"
              >
                <StatusIcon name="lock" />
                {REDACTED_MARKER}
              </mark>
            ) : null}
          </Fragment>
        ))}
        &quot;
      </span>
    );
  }
  if (typeof value === "number") return <span className="text-sky-800 dark:text-sky-300">{String(value)}</span>;
  if (typeof value === "boolean") return <span className="text-indigo-700 dark:text-indigo-300">{String(value)}</span>;
  if (value === null) return <span className="text-neutral-500">null</span>;
  return <span className="text-neutral-500">{String(value)}</span>;
}
