// A loopback port on the operator's machine that reaches a port on the host's loopback through the
// SSH connection (direct-tcpip), so kubectl talks to the debug apiserver without it listening
// beyond what the lab's firewall allows. The apiserver's serving cert names 127.0.0.1.
import { createServer, type Server } from 'node:net';
import type { Session } from '../../core/transport/index.ts';

export interface Forward {
  port: number;
  close(): Promise<void>;
}

export async function forwardLocal(s: Session, remotePort: number): Promise<Forward> {
  const server: Server = createServer((sock) => {
    s.openLocalPort(remotePort).then(
      (ch) => {
        sock.pipe(ch).pipe(sock);
        // ssh2 emits a forwarded channel's close (which frees its session slot) only once its
        // readable side has ended: unpiped from a closed socket, it must be drained to get there.
        const end = () => {
          sock.destroy();
          ch.destroy();
          ch.resume();
        };
        if (sock.destroyed) end();
        sock.on('error', end);
        ch.on('error', end);
        sock.on('close', end);
        ch.on('close', end);
      },
      () => sock.destroy(),
    );
  });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => res());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    port,
    close: () =>
      new Promise((res) => {
        server.close(() => res());
      }),
  };
}
