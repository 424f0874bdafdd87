// A loopback HTTP server handing out fixed files by path: the "release server" the download tests
// use, since this machine cannot reach the real ones. 404 for anything else.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function serveFiles(
  files: Map<string, Buffer>,
): Promise<{ base: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const body = files.get(req.url ?? '');
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
