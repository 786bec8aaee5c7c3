import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Gate {
  /** The base URL to give the relay as INVOICE_API_URL. */
  readonly url: string;
  /** Resolves when the first request reaches the gate. */
  readonly firstRequest: Promise<void>;
  /** Requests held now (their senders still waiting). */
  held(): number;
  /** Lets every held request and every later one through to the target. */
  open(): void;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Sends a request received to `target` and its answer back. */
async function forward(target: string, req: IncomingMessage, body: Buffer): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    if (typeof value === "string" && !["host", "connection", "content-length"].includes(name))
      headers.set(name, value);
  return fetch(`${target}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    ...(body.length > 0 ? { body } : {}),
  });
}

async function answer(res: ServerResponse, answered: Response): Promise<void> {
  const out: Record<string, string> = {};
  answered.headers.forEach((value, name) => {
    if (!["connection", "content-length", "transfer-encoding", "keep-alive"].includes(name))
      out[name] = value;
  });
  res.writeHead(answered.status, out);
  res.end(Buffer.from(await answered.arrayBuffer()));
}

/**
 * An HTTP proxy that holds every request until it is opened, then forwards each one to `target`: a test
 * can act at the moment the first invoice is being sent, before any answer reaches the relay. With
 * `passFirst`, that many requests go through at once before the gate holds the rest; a held request
 * whose sender went away meanwhile is never forwarded (`held()` counts those still waiting).
 */
export async function startGate(target: string, { passFirst = 0 } = {}): Promise<Gate> {
  let opened: () => void = () => undefined;
  let isOpened = false;
  const isOpen = new Promise<void>((resolve) => (opened = resolve));
  let arrived: () => void = () => undefined;
  const firstRequest = new Promise<void>((resolve) => (arrived = resolve));
  let passed = 0;
  let held = 0;
  const server = createServer((req, res) => {
    arrived();
    void (async () => {
      const body = await bodyOf(req);
      if (passed < passFirst) passed++;
      else if (!isOpened) {
        held++;
        let gone = false;
        res.once("close", () => {
          held--;
          gone = true;
        });
        await isOpen;
        if (gone) return;
      }
      await answer(res, await forward(target, req, body));
    })().catch(() => res.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    firstRequest,
    held: () => held,
    open: () => {
      isOpened = true;
      opened();
    },
    close: async () => {
      opened();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
