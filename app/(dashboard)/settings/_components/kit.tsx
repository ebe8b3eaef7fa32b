/**
 * The pieces every Settings section shares (one copy, where each section file used to carry its own): the section
 * frame with its heading and hint, inline code, the error line, the "shown once" secret box, and the input and button
 * styles. Presentational only; no data fetching.
 */
import { CopyButton } from "@/components/ui/CopyButton";

export const inputClass = "rounded-md border border-neutral-300 px-2 py-1.5 text-sm";
export const primaryClass = "rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50";
export const smallClass = "rounded border border-neutral-300 px-2 py-0.5 text-xs hover:bg-neutral-50";

/** Inline code in a section's hint (a header, a URL template). */
export function Code({ children }: { children: React.ReactNode }) {
  return <code className="rounded bg-neutral-100 px-1 py-0.5 font-mono text-xs text-neutral-800">{children}</code>;
}

/** One titled block of a settings page; `id` names the heading (`<id>-h`) the section is labelled by. */
export function Section({
  id,
  title,
  hint,
  children,
}: {
  id: string;
  title: string;
  hint: React.ReactNode;
  children: React.ReactNode;
}) {
  return (
    <section id={id} aria-labelledby={`${id}-h`} className="rounded-lg border border-neutral-200 bg-white p-4">
      <h2 id={`${id}-h`} className="text-base font-semibold">
        {title}
      </h2>
      <p className="mb-3 text-sm text-neutral-600">{hint}</p>
      {children}
    </section>
  );
}

/** A failed request's message, announced. */
export function ErrorLine({ error }: { error: Error | null | undefined }) {
  return error ? (
    <p role="alert" className="mt-2 text-sm text-red-700">
      {error.message}
    </p>
  ) : null;
}

/** A secret the server returns once (an API key, a signing secret), with a copy button. */
export function ShownOnce({ what, secret, testId }: { what: string; secret: string; testId: string }) {
  return (
    <div role="status" className="mt-3 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm">
      <p className="font-medium">Copy {what} now: it will not be shown again.</p>
      <div className="mt-2 flex items-center gap-2">
        <code className="break-all rounded bg-white px-2 py-1 font-mono text-xs" data-testid={testId}>
          {secret}
        </code>
        <CopyButton value={secret} />
      </div>
    </div>
  );
}

/**
 * A table's horizontal scroll box: at narrow widths the table scrolls inside it, not the page. It is focusable and
 * named, so keyboard users can scroll it too (WCAG 2.1.1; axe `scrollable-region-focusable`).
 */
export function TableScroll({
  label,
  className = "",
  children,
}: {
  label: string;
  className?: string;
  children: React.ReactNode;
}) {
  return (
    <div
      role="region"
      aria-label={label}
      tabIndex={0}
      className={`relative overflow-x-auto focus-visible:outline focus-visible:outline-2 focus-visible:outline-sky-600 ${className}`}
    >
      {children}
    </div>
  );
}
