/**
 * The media type filter everywhere a type filters (search's `type:`, list's and search's
 * `type`, grep's): no imports, as the query's other pieces (fts.ts), which browsers load
 * as they are.
 */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The SQL condition (on `entries e`) that an entry's media type is one of `types`, as search's
 * `type:` reads them everywhere a type filters (list, search, grep): `text/markdown` exactly,
 * `text/*` a whole type, a subtype alone (`pdf`, `markdown`, `json`, also `application/ld+json`);
 * parameters (`; charset=utf-8`) and case aside.
 */
/**
 * Names people give a type by its file's extension, whose media type's subtype is another word
 * (`docx` is `…wordprocessingml.document`): `type:docx` found nothing, silently (a trial).
 */
const BY_EXTENSION: Readonly<Record<string, string>> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  md: 'text/markdown',
  txt: 'text/plain',
  htm: 'text/html',
  js: 'text/javascript',
  yml: 'application/yaml',
  jpg: 'image/jpeg',
};

export function mediaTypesSql(types: readonly string[]): { sql: string; params: string[] } {
  const bare = "lower(trim(CASE WHEN instr(e.media_type, ';') > 0 THEN substr(e.media_type, 1, instr(e.media_type, ';') - 1) ELSE e.media_type END))";
  const alts: string[] = [];
  const params: string[] = [];
  for (const raw of types) {
    const given = raw.trim().toLowerCase().split(';')[0]!.trim();
    const t = BY_EXTENSION[given] ?? given;
    // A type or a whole type also bounds the column itself, so the media-type index narrows
    // the scan (types are stored as detected or given: lower case, parameters after the type).
    if (t.endsWith('/*')) {
      alts.push(`(e.media_type >= ? AND e.media_type < ? AND ${bare} LIKE ? ESCAPE '\\')`);
      params.push(t.slice(0, -1), `${t.slice(0, -1)}\u{10ffff}`, `${likeLiteral(t.slice(0, -1))}%`);
    } else if (t.includes('/')) {
      alts.push(`(e.media_type >= ? AND e.media_type < ? AND ${bare} = ?)`);
      params.push(t, `${t}\u{10ffff}`, t);
    } else {
      alts.push(`(${bare} LIKE ? ESCAPE '\\' OR ${bare} LIKE ? ESCAPE '\\')`);
      params.push(`%/${likeLiteral(t)}`, `%+${likeLiteral(t)}`);
    }
  }
  return { sql: `(e.media_type IS NOT NULL AND (${alts.join(' OR ')}))`, params };
}
