/**
 * Where a lint finding's field sits in the text people wrote: the 1-based line of the value at a path such as
 * `credentials[0].allowed_hosts[0]`, in YAML or JSON text (the YAML parser reads both). Used by the policies page to
 * show each finding beside its line. Pure; no database.
 */
import YAML, { LineCounter, isNode } from "yaml";

/** `credentials[0].allowed_hosts[0]` → `["credentials", 0, "allowed_hosts", 0]`. */
export function pathSegments(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  const re = /([^.[\]]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g;
  for (const m of path.matchAll(re)) {
    if (m[2] !== undefined) out.push(Number(m[2]));
    else if (m[3] !== undefined) out.push(JSON.parse(`"${m[3]}"`) as string);
    else if (m[1] !== undefined) out.push(m[1]);
  }
  return out;
}

/**
 * The line of each path in `text`: the node at the path, else its nearest parent that exists (a missing field is
 * shown at its parent). Paths that cannot be placed (empty path, unparseable text) are absent from the result.
 */
export function linesOfPaths(text: string, paths: string[]): Map<string, number> {
  const lines = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lines, uniqueKeys: false, prettyErrors: false });
  const out = new Map<string, number>();
  if (doc.errors.length) return out;
  for (const path of paths) {
    const segs = pathSegments(path);
    for (let n = segs.length; n > 0; n--) {
      const node = doc.getIn(segs.slice(0, n), true);
      if (isNode(node) && node.range) {
        out.set(path, lines.linePos(node.range[0]).line);
        break;
      }
    }
  }
  return out;
}
