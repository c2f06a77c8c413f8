/**
 * Real PDF, DOCX and HTML documents for the extraction tests, made here: PDFs by Debian's groff
 * and ghostscript (ps2pdf; scripts/bootstrap.sh installs them), DOCX files zipped by the test
 * (the three parts Word needs), HTML written out.
 */
import { execFileSync } from 'node:child_process';
import JSZip from 'jszip';

/** A PDF with one page per string (groff -Tps | ps2pdf). */
export function makePdf(pages: string[]): Uint8Array {
  const roff = pages.map((p) => p.replace(/^[.']/gm, '\\&$&')).join('\n.bp\n');
  const ps = execFileSync('groff', ['-Tps'], { input: roff });
  return new Uint8Array(execFileSync('ps2pdf', ['-', '-'], { input: ps }));
}

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>`;
const RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>`;
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A DOCX with one paragraph per string. */
export async function makeDocx(paragraphs: string[]): Promise<Uint8Array> {
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${esc(p)}</w:t></w:r></w:p>`).join('');
  const zip = new JSZip();
  zip.file('[Content_Types].xml', CONTENT_TYPES);
  zip.file('_rels/.rels', RELS);
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`);
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

/** An HTML page: a title, paragraphs, and markup whose words must not be indexed. */
export function makeHtml(title: string, paragraphs: string[]): Uint8Array {
  return new TextEncoder().encode(`<!DOCTYPE html>
<html><head><title>${esc(title)}</title><style>.hidden { color: red }</style><script>var scriptword = 1;</script></head>
<body><h1>${esc(title)}</h1>${paragraphs.map((p) => `<p class="para">${esc(p)} <a href="https://example.org/hrefword">link</a></p>`).join('\n')}
<table><tr><th>cell</th></tr><tr><td>tablecellword</td></tr></table></body></html>`);
}
