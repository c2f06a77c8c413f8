/**
 * Sparse writes (decision 0074): a piece of a document that is all zeros and at least a block
 * long is left unwritten by whoever writes the document to a file (restore, `kura get -o`),
 * the file's length set at the end — the same bytes read back, and a disk image's or a
 * database's empty space takes no disk where the file system has holes.
 */

/**
 * The least run of zero bytes left as a hole: a file-system block. Smaller runs share their
 * block with written bytes and would save nothing.
 */
export const HOLE_MIN = 4096;

/** Zero bytes to compare pieces with (grown to the largest piece seen). */
let zeros = new Uint8Array(0);

/** Whether a writer may leave `piece` a hole: a block or more, all zeros (one memcmp). */
export function leavesHole(piece: Uint8Array): boolean {
  if (piece.length < HOLE_MIN) return false;
  if (zeros.length < piece.length) zeros = new Uint8Array(piece.length);
  return Buffer.compare(piece, zeros.subarray(0, piece.length)) === 0;
}
