/**
 * A strip of chunk cells: green where the put wrote new bytes, grey where the store already
 * had them. Drawn on a canvas (a large file has thousands of chunks); the label says it in
 * words for screen readers.
 */
import { useEffect, useRef } from 'preact/hooks';

export function ChunkMap({ cells, chunks, newChunks }: { cells: Uint8Array; chunks: number; newChunks: number }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const c = ref.current;
    if (!c) return;
    const width = c.clientWidth || 600;
    const height = 18;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(width * dpr);
    c.height = Math.round(height * dpr);
    const g = c.getContext('2d')!;
    g.scale(dpr, dpr);
    const w = width / Math.max(1, cells.length);
    const gap = w > 4 ? 1 : 0;
    cells.forEach((share, i) => {
      // Interpolate stored grey -> new green by the share of new bytes in the cell.
      const t = share / 255;
      const r = Math.round(180 + (22 - 180) * t);
      const gr = Math.round(186 + (163 - 186) * t);
      const b = Math.round(196 + (74 - 196) * t);
      g.fillStyle = `rgb(${r},${gr},${b})`;
      g.fillRect(i * w, 0, Math.max(1, w - gap), height);
    });
  }, [cells]);
  return (
    <canvas
      ref={ref}
      class="chunkmap"
      role="img"
      aria-label={`chunk map: ${newChunks} of ${chunks} chunks new, ${chunks - newChunks} already stored`}
      data-new={newChunks}
      data-chunks={chunks}
    />
  );
}
