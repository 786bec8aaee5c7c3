import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One scripted reply; `n` is the 1-based number of the request. */
export type Reply = (res: ServerResponse, req: IncomingMessage, n: number) => void;

export interface TokenServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A tiny HTTP server on 127.0.0.1 that answers each request with the next scripted reply (the last one
 * repeats), after reading the whole request body.
 */
export async function startTokenServer(replies: readonly Reply[]): Promise<TokenServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const reply = replies[Math.min(requests.length, replies.length) - 1];
      if (reply === undefined) throw new Error("no replies scripted");
      reply(res, req, requests.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
      }),
  };
}

export const DEV_KEY = "amn_dev_9fKq2LmX7vB0zR4tY8wE1uI3oP5aS6dF";

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
}

export function grant(overrides: Record<string, unknown> = {}): Reply {
  return json(201, {
    developer_id: "dev-acct-42",
    api_key: DEV_KEY,
    key_prefix: "amn_dev_",
    note: "Store this key securely. It is displayed only once.",
    ...overrides,
  });
}

/** The request arrived and was acted on, but the answer never leaves: the connection is cut. */
export const loseResponse: Reply = (_res, req) => {
  req.socket.destroy();
};

/** Never answers; the client's timeout has to fire. */
export const hang: Reply = () => undefined;

/** A port on 127.0.0.1 where nothing listens (just freed). */
export async function closedPort(): Promise<number> {
  const server = await startTokenServer([json(200, {})]);
  await server.close();
  return Number(new URL(server.url).port);
}
