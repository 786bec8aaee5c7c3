import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedPost {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: unknown;
}

export interface WebhookReceiver {
  /** The URL to set as NOTIFY_WEBHOOK_URL, with a token in its path as Slack's have. */
  readonly url: string;
  readonly token: string;
  readonly posts: ReceivedPost[];
  close(): Promise<void>;
}

/** A local incoming webhook on 127.0.0.1 that records every POST it gets and answers 200. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const posts: ReceivedPost[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => {
      posts.push({ path: req.url ?? "", contentType: req.headers["content-type"], body: JSON.parse(text) });
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const token = "T0RELAY/B0ALERTS/webhook-token-5e3c1a";
  return {
    url: `http://127.0.0.1:${port}/services/${token}`,
    token,
    posts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** A URL on a port nothing listens on (taken, then released). */
export async function closedWebhookUrl(): Promise<string> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/services/T0DOWN/B0DOWN/down-token-77aa`;
}
