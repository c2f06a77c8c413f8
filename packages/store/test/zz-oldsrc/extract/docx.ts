/** DOCX text by mammoth (its raw text: paragraphs separated by blank lines). */
import type { ExtractCaps, Extracted } from './caps.js';

export async function docxText(bytes: Uint8Array, caps: ExtractCaps): Promise<Extracted> {
  const mammoth = (await import('mammoth')).default;
  // mammoth's Node build reads a Buffer, its browser build an ArrayBuffer.
  const input = typeof Buffer === 'function' ? { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) } : { arrayBuffer: bytes.slice().buffer };
  const { value } = await mammoth.extractRawText(input);
  const text = value.replace(/\n{3,}/g, '\n\n').trim();
  if (text.length > caps.chars) return { status: 'capped', text: text.slice(0, caps.chars), note: `text cut at ${caps.chars} characters` };
  return { status: 'ok', text };
}
