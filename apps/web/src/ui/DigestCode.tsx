/**
 * A digest shown short (a whole one fills a line); the whole digest is its title, and a click
 * (or Enter) copies it, so it can be pasted into `kura get` or a URL.
 */
import { useState } from 'preact/hooks';
import { shortDigest } from './format.js';

export function DigestCode({ digest }: { digest: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(digest);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      // No clipboard (an insecure origin, or permission refused): the title still shows it whole.
    }
  };
  return (
    <button type="button" class="digest" title={digest} aria-label={`Copy ${digest}`} data-testid="copy-digest" onClick={copy}>
      {copied ? 'copied' : shortDigest(digest)}
    </button>
  );
}
