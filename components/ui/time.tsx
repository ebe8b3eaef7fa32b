/**
 * Time display: a <time> element with the exact UTC instant as its title.
 */
export function Time({ iso, className }: { iso: string | null; className?: string }) {
  if (!iso) return <span className={className}>—</span>;
  const d = new Date(iso);
  const text = d
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " UTC");
  return (
    <time dateTime={iso} title={iso} className={className}>
      {text}
    </time>
  );
}
