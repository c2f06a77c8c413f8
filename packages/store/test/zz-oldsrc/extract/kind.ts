/**
 * Which extractor a document's text needs (decision 0035): by its content first, then by the
 * media type of the entry being indexed. Text-like documents need none (search/text.ts).
 */

export type ExtractKind = 'pdf' | 'docx' | 'html';

/** Bytes of a document's start that kind detection looks at. */
export const KIND_HEAD = 64 * 1024;

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const latin1 = new TextDecoder('latin1');

/** The kind `head` (a document's first bytes, up to KIND_HEAD) and `mediaType` show, if any. */
export function extractKind(head: Uint8Array, mediaType: string | null): ExtractKind | undefined {
  const start = latin1.decode(head.subarray(0, 1024));
  // PDF readers accept junk before the header (PDF 32000 §7.5.2 implementations look within 1 KiB).
  if (start.includes('%PDF-')) return 'pdf';
  if (start.startsWith('PK\x03\x04') && latin1.decode(head).includes('word/document.xml')) return 'docx';
  if (/^(\uFEFF|\xEF\xBB\xBF)?\s*<(!doctype\s+html|html[\s>])/i.test(start)) return 'html';
  const type = mediaType?.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/pdf') return 'pdf';
  if (type === DOCX_TYPE) return 'docx';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  return undefined;
}
