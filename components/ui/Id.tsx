/**
 * An identifier (task id, idempotency key, event or sandbox id) in monospace on one line. Ids are never broken
 * mid-token ("case" / "-918"); when one does not fit its box it ends in an ellipsis and the whole id is its title.
 * `inline`: flows in a sentence (inline-block) instead of taking its own block; either way it is at most as wide
 * as its container, which must itself be allowed to shrink (`min-w-0` in a flex or grid item).
 */
export function Id({
  value,
  className = "",
  inline = false,
  "data-testid": testId,
}: {
  value: string;
  className?: string;
  inline?: boolean;
  "data-testid"?: string;
}) {
  return (
    <span
      className={`${inline ? "inline-block align-bottom" : "block"} max-w-full truncate font-mono ${className}`}
      title={value}
      data-testid={testId}
    >
      {value}
    </span>
  );
}
