/** Ports for servers that tests start on loopback. */
import { createServer, type AddressInfo } from 'node:net';

/** A port nobody listens on right now (servers under test are told it; port 0 would not be printed). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
