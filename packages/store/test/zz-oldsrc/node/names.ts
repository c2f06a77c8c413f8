/** File names that are not text: Linux allows any bytes but `/` and NUL in a name. */

/**
 * A file name's bytes as a person can read and type them back: printable ASCII as is, every
 * other byte as \\xNN (as `ls -b` shows names). Kura stores paths as UTF-8 text, so a name that
 * is not UTF-8 is reported this way, never stored mangled.
 */
export function escapedName(raw: Uint8Array): string {
  return Array.from(raw, (b) => (b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('');
}
