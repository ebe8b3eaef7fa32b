/**
 * The form rows the map editors (a worksheet row, an exercise) share: the control styles, a field's error line, and
 * a labelled text area with its error. Layout only: no state, no data fetching.
 */

/** A text input or select of an editor; red border while `aria-invalid`. */
export const inputClass =
  "w-full rounded-md border border-neutral-400 bg-white px-2 py-1.5 text-sm aria-[invalid=true]:border-red-600";

/** A multi-line text area of an editor. */
export const areaClass = `${inputClass} min-h-[4.5rem] resize-y`;

/** The label of one control, wrapping it (add `block` to put the control on its own line). */
export const labelClass = "text-xs font-medium text-neutral-800";

/** A small secondary button (add, remove, link, a preset). */
export const smallButtonClass =
  "rounded-md border border-neutral-400 bg-white px-2 py-1 text-xs font-medium text-neutral-800 hover:bg-neutral-100 disabled:opacity-60";

/**
 * The server's message for one field, under it (`role="alert"`, so it is announced). `id` is what the field's
 * `aria-describedby` names, when it names one.
 */
export function FieldError({ id, text, className = "" }: { id?: string; text: string; className?: string }) {
  return (
    <p id={id} className={`text-xs text-red-800 ${className}`.trim()} role="alert" data-testid="field-error">
      <span aria-hidden="true">✕ </span>
      {text}
    </p>
  );
}

/**
 * A labelled text area with its error line: the label above, the area (`id`), the server's message under it
 * (`{id}-err`, named by the area's `aria-describedby`).
 */
export function TextAreaField({
  id,
  label,
  value,
  error,
  placeholder,
  className,
  areaClassName = areaClass,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  error?: string;
  placeholder?: string;
  className?: string;
  areaClassName?: string;
  onChange: (v: string) => void;
}) {
  return (
    <div className={className}>
      <label className="block text-xs font-semibold text-neutral-900" htmlFor={id}>
        {label}
      </label>
      <textarea
        id={id}
        className={areaClassName}
        value={value}
        aria-invalid={Boolean(error)}
        aria-describedby={error ? `${id}-err` : undefined}
        placeholder={placeholder}
        onChange={(e) => onChange(e.target.value)}
      />
      {error ? <FieldError id={`${id}-err`} text={error} /> : null}
    </div>
  );
}
