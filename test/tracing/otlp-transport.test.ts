import { once } from "node:events";
import { Agent, createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { OtlpTransport } from "../../src/tracing/otlp-transport.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();
const BATCH = new Uint8Array([10, 20, 30, 40, 50]);

interface Received {
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
}

/** A collector on loopback answering each export with `answer` (the n-th export, from 1). */
async function collector(answer: (n: number, res: ServerResponse) => void) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(parts) });
      answer(received.length, res);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, received };
}

function transport(url: string, compression: "gzip" | "none" = "none") {
  const agent = new Agent({ keepAlive: true });
  cleanups.push(() => {
    agent.destroy();
    return Promise.resolve();
  });
  const t = new OtlpTransport({
    url,
    headers: () => Promise.resolve({ "Content-Type": "application/x-protobuf", "x-tenant": "night" }),
    compression,
    agent: () => Promise.resolve(agent),
  });
  cleanups.push(() => {
    t.close();
    return Promise.resolve();
  });
  return t;
}

describe("the OTLP/HTTP transport of traces", () => {
  it("when OTEL_EXPORTER_OTLP_COMPRESSION is gzip and headers are set, then the collector gets the batch gzipped, with the headers", async () => {
    const otlp = await collector((_n, res) => res.writeHead(200).end());
    const result = await transport(otlp.url, "gzip").send(BATCH, 5000);

    expect(result.status).toBe("success");
    const [got] = otlp.received;
    expect(got?.headers).toMatchObject({
      "content-type": "application/x-protobuf",
      "content-encoding": "gzip",
      "x-tenant": "night",
    });
    expect(new Uint8Array(gunzipSync(got?.body ?? Buffer.alloc(0)))).toEqual(BATCH);
  });

  it("when the collector answers 503 with Retry-After: 0, then the batch is sent again and taken; a 400 is not retried", async () => {
    const otlp = await collector((n, res) =>
      n === 1 ? res.writeHead(503, { "retry-after": "0" }).end() : res.writeHead(200).end(),
    );
    expect((await transport(otlp.url).send(BATCH, 5000)).status).toBe("success");
    expect(otlp.received).toHaveLength(2);

    const refusing = await collector((_n, res) => res.writeHead(400).end());
    expect((await transport(refusing.url).send(BATCH, 5000)).status).toBe("failure");
    expect(refusing.received).toHaveLength(1);
  });

  it("when the transport is closed while a retry waits, then the send ends at once, as failed, and sends after it fail without a request", async () => {
    const otlp = await collector((_n, res) => res.writeHead(503).end());
    const t = transport(otlp.url);
    const sending = t.send(BATCH, 30_000);
    while (otlp.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    // The 503 is back within milliseconds; the retry waits 0.8–1.2 s (no event tells when it began).
    await new Promise((r) => setTimeout(r, 200));
    const closedAt = Date.now();
    t.close();

    expect((await sending).status).toBe("failure");
    // The first retry waits about 1 s: ended by the close instead.
    expect(Date.now() - closedAt).toBeLessThan(500);
    expect((await t.send(BATCH, 5000)).status).toBe("failure");
    expect(otlp.received).toHaveLength(1);
  });
});
