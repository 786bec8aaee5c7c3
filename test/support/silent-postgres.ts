import { createServer, type Socket } from "node:net";

/**
 * A PostgreSQL that lets a client in and then never answers a query: it accepts the connection, says
 * the login succeeded and that it is ready (AuthenticationOk, ReadyForQuery; PostgreSQL's frontend/backend
 * protocol, section 55.2.1), and reads every query after in silence. On 127.0.0.1 only.
 */
export async function startSilentPostgres(): Promise<{ readonly url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let startup = true;
    socket.on("data", () => {
      if (!startup) return; // a query: never answered
      startup = false;
      const authOk = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]); // 'R', length 8, 0 = ok
      const ready = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]); // 'Z', length 5, 'I' = idle
      socket.write(Buffer.concat([authOk, ready]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `postgres://relay@127.0.0.1:${port}/relay`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}
