/**
 * A collection nobody here wrote, of the kind Kura's users keep: the manual pages installed on
 * this machine (Debian's /usr/share/man, sections 1, 2, 3, 5, 7 and 8; the ~16,600 generated
 * `gcloud` pages left out), each rendered to plain text as `man` shows it, with known-item
 * questions written for it (bench/collections/man-pages.json: an identifier, a command by what
 * it does, a question in a user's words, each with the pages that answer it).
 *
 * Rendering ~3,400 pages takes `man` a few minutes: the text is kept in
 * bench/.cache/man-pages/<section>/<page>.txt (not committed) and made again only when absent.
 * A machine without the pages (or without `man`) does not score this collection.
 */
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MAN_DIR = '/usr/share/man';
const SECTIONS = ['1', '2', '3', '5', '7', '8'];
export const MAN_CACHE = fileURLToPath(new URL('../.cache/man-pages/', import.meta.url));
export const MAN_QUESTIONS = fileURLToPath(new URL('../collections/man-pages.json', import.meta.url));

/** The installed pages: `{ section, name, file }`, page files only (a link names another page). */
export function installedPages() {
  const pages = [];
  for (const s of SECTIONS) {
    const dir = join(MAN_DIR, `man${s}`);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).sort()) {
      if (!f.endsWith('.gz') || f.startsWith('gcloud')) continue;
      if (!lstatSync(join(dir, f)).isFile()) continue;
      pages.push({ section: s, name: f.slice(0, -'.gz'.length), file: join(dir, f) });
    }
  }
  return pages;
}

/** The page as `man` prints it to a file: 80 columns, no overstrikes, no hyphenation. */
async function render(file) {
  const { stdout } = await run('sh', ['-c', 'MANWIDTH=80 man --no-hyphenation --no-justification -l "$1" 2>/dev/null | col -bx', 'sh', file], { maxBuffer: 1 << 26, env: { ...process.env, LANG: 'C.UTF-8', MAN_KEEP_FORMATTING: '' } });
  return stdout;
}

/** Renders the pages not yet kept, `parallel` at a time; returns how many it rendered. */
export async function renderManPages({ parallel = 2, log = () => {} } = {}) {
  if (!existsSync(MAN_DIR)) return 0;
  const pages = installedPages();
  const todo = pages.filter((p) => !existsSync(join(MAN_CACHE, `man${p.section}`, `${p.name}.txt`)));
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < todo.length) {
      const p = todo[next++];
      const dir = join(MAN_CACHE, `man${p.section}`);
      mkdirSync(dir, { recursive: true });
      const text = await render(p.file).catch(() => '');
      const out = join(dir, `${p.name}.txt`);
      // Written whole then renamed: a run cut short never keeps half a page.
      writeFileSync(`${out}.tmp`, text);
      renameSync(`${out}.tmp`, out);
      if (++done % 500 === 0) log(`man pages: ${done} of ${todo.length} rendered`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return todo.length;
}

/** The rendered pages as documents `{ id, path, text }`, paths `man2/open.2` (empty pages left out). */
export function manDocs() {
  if (!existsSync(MAN_DIR)) throw new Error(`no manual pages in ${MAN_DIR}`);
  const docs = [];
  for (const p of installedPages()) {
    const file = join(MAN_CACHE, `man${p.section}`, `${p.name}.txt`);
    if (!existsSync(file)) throw new Error(`man page ${p.name} not rendered: run the search suite once (it renders them into ${MAN_CACHE})`);
    const text = readFileSync(file, 'utf8');
    if (text.trim()) docs.push({ id: docs.length + 1, path: `man${p.section}/${p.name}`, text });
  }
  return docs;
}

/** `{ docs, questions: [{ id, text, kind, relevant: Set<path> }] }`: questions with a relevant page installed here. */
export function loadManPages() {
  const docs = manDocs();
  const have = new Set(docs.map((d) => d.path));
  const questions = JSON.parse(readFileSync(MAN_QUESTIONS, 'utf8')).questions
    .map((q) => ({ id: q.id, text: q.text, kind: q.kind, relevant: new Set(q.relevant.filter((p) => have.has(p))) }))
    .filter((q) => q.relevant.size > 0);
  return { docs, questions };
}
