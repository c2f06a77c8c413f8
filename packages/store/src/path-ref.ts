/** How a reference names a path's version: `PATH@N`, `PATH@<ISO time>` (FORMAT.md §11). */

/** A reference that is not a digest: its path, and `@N` (a version) or `@<ISO time>` (the version latest then). */
export function parseRef(ref: string): { path: string; which: { version?: number; at?: string } } {
  const at = ref.lastIndexOf('@');
  const suffix = at > 0 ? ref.slice(at + 1) : '';
  if (/^[0-9]+$/.test(suffix)) return { path: ref.slice(0, at), which: { version: Number(suffix) } };
  if (suffix && !Number.isNaN(Date.parse(suffix)) && /^\d{4}-\d\d/.test(suffix)) return { path: ref.slice(0, at), which: { at: suffix } };
  return { path: ref, which: {} };
}
