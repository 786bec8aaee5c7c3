import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface Gate {
  /** The base URL to give the relay as INVOICE_API_URL. */
  readonly url: string;
  /** Resolves when the first request reaches the gate. */
  readonly firstRequest: Promise<void>;
  /** Lets every held request and every later one through to the target. */
  open(): void;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * An HTTP proxy that holds every request until it is opened, then forwards each one to `target`: a test
 * can act at the moment the first invoice is being sent, before any answer reaches the relay.
 */
export async function startGate(target: string): Promise<Gate> {
  let opened: () => void = () => undefined;
  const isOpen = new Promise<void>((resolve) => (opened = resolve));
  let arrived: () => void = () => undefined;
  const firstRequest = new Promise<void>((resolve) => (arrived = resolve));
  const server = createServer((req, res) => {
    arrived();
    void (async () => {
      const body = await bodyOf(req);
      await isOpen;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === "string" && !["host", "connection", "content-length"].includes(name))
          headers.set(name, value);
      const answer = await fetch(`${target}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!["connection", "content-length", "transfer-encoding", "keep-alive"].includes(name))
          out[name] = value;
      });
      res.writeHead(answer.status, out);
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    firstRequest,
    open: opened,
    close: async () => {
      opened();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
