/**
 * Raw HTTP/1.1 over node:net, for what a well-behaved client (undici) never does: send half a
 * body and vanish, stall mid-request, declare a length it will never send.
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Raw {
  socket: Socket;
  /** Sends bytes; resolves once they are handed to the kernel (false if the socket is gone). */
  send(data: string | Uint8Array): Promise<boolean>;
  /** Resolves when the connection closes, whoever closed it. */
  closed: Promise<void>;
  /** True once the server ended or reset the connection (we never did). */
  closedByServer(): boolean;
  /** Everything the server sent so far. */
  received(): Buffer;
  /** Cuts the connection from our side: a FIN-and-close, or a TCP RST. */
  cut(how: 'close' | 'reset'): void;
}

export async function openRaw(port: number): Promise<Raw> {
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  const chunks: Buffer[] = [];
  let ours = false;
  let theirs = false;
  socket.on('data', (d: Buffer) => chunks.push(d));
  // The server ending its side (FIN) or resetting it: either way, it cut us.
  socket.on('end', () => {
    if (!ours) theirs = true;
    socket.destroy();
  });
  socket.on('error', () => {
    if (!ours) theirs = true;
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    send: (data) =>
      new Promise<boolean>((resolve) => {
        if (socket.destroyed) return resolve(false);
        socket.write(data, (err) => resolve(!err));
      }),
    closed,
    closedByServer: () => theirs,
    received: () => Buffer.concat(chunks),
    cut(how) {
      ours = true;
      if (how === 'reset') socket.resetAndDestroy();
      else socket.destroy();
    },
  };
}

/** A request head: request line, Host, the given headers, blank line. */
export function requestHead(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** One HTTP/1.1 chunk of a chunked body. */
export const chunkFrame = (piece: Uint8Array): Buffer => Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  json: any;
}

/** The first response in `raw` when it is complete (Content-Length framed), else undefined. */
export function parseResponse(raw: Buffer): RawResponse | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (raw.length < end + 4 + length) return undefined;
  const body = raw.subarray(end + 4, end + 4 + length);
  let json: any;
  try {
    json = headers['content-type']?.includes('json') ? JSON.parse(body.toString()) : undefined;
  } catch {
    json = undefined;
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body, json };
}

/**
 * Waits for a whole response or the end of the connection; `limitMs` only guards against a
 * test hanging (it is never what a test asserts).
 */
export async function responseOf(raw: Raw, limitMs: number): Promise<RawResponse | undefined> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const r = parseResponse(raw.received());
    if (r || raw.socket.destroyed || Date.now() > deadline) return r;
    await Promise.race([raw.closed, sleep(20)]);
  }
}
