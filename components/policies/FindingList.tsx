/** Lint findings as a list: severity, the field path as code, the message (what is wrong and how to fix it). */
export type FindingView = { severity: "error" | "warning"; rule: string; path: string; message: string };

export function SeverityBadge({ severity }: { severity: FindingView["severity"] }) {
  return severity === "error" ? (
    <span className="rounded border border-red-300 bg-red-50 px-1.5 py-0.5 text-xs font-medium text-red-800">
      error
    </span>
  ) : (
    <span className="rounded border border-amber-400 bg-amber-50 px-1.5 py-0.5 text-xs font-medium text-amber-900">
      warning
    </span>
  );
}

export function FindingList({ findings }: { findings: FindingView[] }) {
  return (
    <ul className="mt-1 space-y-1 text-sm" data-testid="finding-list">
      {findings.map((f, i) => (
        <li
          key={i}
          className="flex flex-wrap items-baseline gap-2"
          data-testid="finding"
          data-rule={f.rule}
          data-path={f.path}
        >
          <SeverityBadge severity={f.severity} />
          <code className="break-all rounded bg-neutral-100 px-1 text-xs">{f.path || "(document)"}</code>
          <span className="text-neutral-900">{f.message}</span>
        </li>
      ))}
    </ul>
  );
}
