/**
 * The largest artifact a runtime may upload (decision 0045): `CUSTODY_ARTIFACT_MAX_BYTES` (a whole number of bytes),
 * default 10 MiB. An unreadable setting falls back to the default rather than opening the limit.
 */
export const DEFAULT_ARTIFACT_MAX_BYTES = 10 * 1024 * 1024;

/** The upload limit in bytes, read from the environment on each call (tests and operators may change it). */
export function artifactMaxBytes(): number {
  const raw = process.env.CUSTODY_ARTIFACT_MAX_BYTES;
  if (!raw) return DEFAULT_ARTIFACT_MAX_BYTES;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_ARTIFACT_MAX_BYTES;
}
