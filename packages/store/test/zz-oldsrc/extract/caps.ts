/** What one document's extraction may take (decision 0035); each cap met is recorded as `capped`. */
export interface ExtractCaps {
  /** Larger documents are not opened. */
  bytes: number;
  /** PDF pages read. */
  pages: number;
  /** Characters of text kept. */
  chars: number;
  /** Milliseconds before the extraction is stopped (where the platform can stop it). */
  ms: number;
}

export const EXTRACT_CAPS: ExtractCaps = { bytes: 64 << 20, pages: 2000, chars: 4 << 20, ms: 30_000 };

/** One document's extraction: its text (possibly cut short) and how it went. */
export interface Extracted {
  status: 'ok' | 'capped' | 'failed';
  text: string;
  /** PDF pages read. */
  pages?: number;
  /** Why it was capped or failed. */
  note?: string;
}
