/** Display helpers: sizes, rates, ratios, times. */
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function bytes(n: number): string {
  if (!Number.isFinite(n)) return '–';
  let i = 0;
  let v = n;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 2 : 1)} ${UNITS[i]}`;
}

export const rate = (bytesPerSecond: number) => `${(bytesPerSecond / 1e6).toFixed(1)} MB/s`;
export const ratio = (r: number) => `${r.toFixed(2)}×`;
export const shortDigest = (d: string) => `${d.slice(0, 15)}…${d.slice(-6)}`;
export const when = (iso: string) => new Date(iso).toLocaleString();
