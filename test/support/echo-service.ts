import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface EchoService {
  readonly url: string;
  /** Requests answered so far. */
  requests(): number;
  close(): Promise<void>;
}

/**
 * A careless stand-in for the invoice service, on loopback: it answers every request with `status` and
 * echoes the Authorization header it got in a header (`x-request-id`) and in its problem+json body, so
 * tests can prove that what a service echoes never carries the API key any further.
 */
export async function startEchoService(status: number): Promise<EchoService> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      count++;
      const echoed = req.headers.authorization ?? "(none)";
      res.writeHead(status, {
        "content-type": "application/problem+json",
        "x-request-id": `req-${echoed}`,
      });
      res.end(JSON.stringify({ title: "Echo", detail: `refused ${echoed}`, authorization: echoed }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
