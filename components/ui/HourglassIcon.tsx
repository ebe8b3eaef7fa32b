/**
 * An hourglass (waiting: evidence requested, sign-off awaited), drawn inline rather than as the ⧗ character, which the
 * fonts of a headless Debian Chromium lack (it showed as an empty box). Decorative: the word beside it carries the
 * meaning, so it is hidden from assistive technology. Sized to the text (1em) and drawn in its colour.
 */
export function HourglassIcon({ className = "" }: { className?: string }) {
  return (
    <svg
      viewBox="0 0 16 16"
      width="1em"
      height="1em"
      aria-hidden="true"
      focusable="false"
      className={`inline-block shrink-0 align-[-0.125em] ${className}`}
      data-icon="hourglass"
    >
      <path
        d="M4 1.5h8M4 14.5h8M5 1.5v2.2c0 1.3 3 3.1 3 4.3 0 1.2-3 3-3 4.3v2.2M11 1.5v2.2c0 1.3-3 3.1-3 4.3 0 1.2 3 3 3 4.3v2.2"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.5"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
      <path d="M6.2 13.2 8 11.4l1.8 1.8z" fill="currentColor" />
    </svg>
  );
}
