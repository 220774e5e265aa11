import { createHash } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';

/**
 * The server half of RFC 6455, as much as a JSON test double needs: the opening handshake, text frames (also
 * fragmented), ping/pong and close. The project has no WebSocket server package; the connector under test uses
 * Node's own (maintained) client, so only the double's side is written here.
 */

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export class WsPeer {
  private buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  closed = false;
  onText: (text: string) => void = () => undefined;
  onClose: () => void = () => undefined;

  constructor(readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('close', () => this.finish());
    socket.on('error', () => this.finish());
  }

  sendText(text: string): void {
    if (this.closed) return;
    this.socket.write(frame(0x1, Buffer.from(text, 'utf8')));
  }

  /** A clean close (status 1000). */
  close(code = 1000): void {
    if (this.closed) return;
    const body = Buffer.alloc(2);
    body.writeUInt16BE(code);
    this.socket.write(frame(0x8, body));
    this.socket.end();
    this.finish();
  }

  /** Drops the TCP connection without a close frame (a network failure). */
  destroy(): void {
    this.socket.destroy();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  private read(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.buffer.length < 2) return;
      const b0 = this.buffer[0]!;
      const b1 = this.buffer[1]!;
      const opcode = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      const masked = (b1 & 0x80) !== 0;
      let len = b1 & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (this.buffer.length < 4) return;
        len = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (this.buffer.length < 10) return;
        len = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      const maskLen = masked ? 4 : 0;
      if (this.buffer.length < offset + maskLen + len) return;
      const mask = masked ? this.buffer.subarray(offset, offset + 4) : undefined;
      const payload = Buffer.from(this.buffer.subarray(offset + maskLen, offset + maskLen + len));
      if (mask) for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
      this.buffer = this.buffer.subarray(offset + maskLen + len);
      this.frame(opcode, fin, payload);
    }
  }

  private frame(opcode: number, fin: boolean, payload: Buffer): void {
    if (opcode === 0x8) {
      this.close();
      return;
    }
    if (opcode === 0x9) {
      this.socket.write(frame(0xa, payload));
      return;
    }
    if (opcode === 0xa) return;
    if (opcode === 0x1 || opcode === 0x2 || opcode === 0x0) {
      this.fragments.push(payload);
      if (!fin) return;
      const text = Buffer.concat(this.fragments).toString('utf8');
      this.fragments = [];
      this.onText(text);
    }
  }
}

function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const header = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  if (len < 126) header[1] = len;
  else if (len < 65536) {
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([header, payload]);
}

export interface WsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on a free loopback port; every upgraded connection is handed to onPeer. */
export async function startWsServer(onPeer: (peer: WsPeer) => void): Promise<WsServer> {
  const server = http.createServer((_req, res) => {
    res.writeHead(426).end();
  });
  const sockets = new Set<Socket>();
  server.on('upgrade', (req, socket: Socket) => {
    const key = req.headers['sec-websocket-key'];
    if (typeof key !== 'string' || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const accept = createHash('sha1')
      .update(key + GUID)
      .digest('base64');
    socket.write(['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Accept: ${accept}`, '', ''].join('\r\n'));
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    onPeer(new WsPeer(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
