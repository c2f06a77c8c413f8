/**
 * Loading and checking peers. A peer that fails to import, or whose output disagrees with
 * Kura's on a check input, is reported as unavailable with the reason: the suite goes on,
 * since a missing peer says nothing about Kura. (Kura itself failing is a crash.)
 */

/**
 * `load` resolves to the op function (data => output). Returns { impl, fn } or
 * { impl, error }.
 */
export async function loadPeer(impl, load) {
  try {
    return { impl, fn: await load() };
  } catch (error) {
    return { impl, error: `failed to load: ${error.message.split('\n')[0]}` };
  }
}

/** Hex of a digest in any of the shapes peers return (hex string, bytes, 'sha256:' prefix). */
export function hex(digest) {
  if (typeof digest === 'string') return digest.replace(/^sha256:/, '');
  return Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex');
}

/**
 * Keeps the peers whose `fn(input)` gives the same digest as Kura's; the others get an
 * `error` saying so. Async peers (promise results) are awaited here.
 */
export async function checkDigests(peers, input, expected) {
  for (const p of peers) {
    if (p.error) continue;
    try {
      const got = hex(await p.fn(input));
      if (got !== expected) p.error = `wrong digest on the check input: ${got.slice(0, 16)}… (Kura ${expected.slice(0, 16)}…)`;
    } catch (error) {
      p.error = `failed on the check input: ${error.message}`;
    }
  }
  return peers;
}
