/**
 * A full page load of a path on this site. Used after the session changed workspace or was just created: a
 * client-side navigation would keep the react-query cache (and server components' payloads) of the previous
 * workspace, so the next page must start from scratch.
 */
export function loadPage(path: string): void {
  window.location.assign(path);
}
