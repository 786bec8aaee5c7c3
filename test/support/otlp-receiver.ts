import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";

/**
 * An OTLP/HTTP trace receiver on loopback, as a collector would be: it keeps every export's bytes and,
 * for JSON exports, their spans. `behaviour` makes it a collector that is down for the relay (answers
 * 500) or stalled (reads the export and never answers).
 */
export type ReceiverBehaviour = "accepts" | "answers-500" | "never-answers";

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly resource: Readonly<Record<string, string | number | boolean>>;
}

export interface OtlpReceiver {
  readonly url: string;
  readonly exports: { readonly path: string; readonly contentType: string; readonly body: Buffer }[];
  readonly spans: ReceivedSpan[];
  close(): Promise<void>;
}

const anyValue = z.object({
  stringValue: z.string().optional(),
  intValue: z.union([z.string(), z.number()]).optional(),
  boolValue: z.boolean().optional(),
  doubleValue: z.number().optional(),
});
const keyValues = z.array(z.object({ key: z.string(), value: anyValue })).default([]);
const jsonExport = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: keyValues }).default({ attributes: [] }),
      scopeSpans: z.array(
        z.object({
          spans: z.array(
            z.object({
              traceId: z.string(),
              spanId: z.string(),
              parentSpanId: z.string().default(""),
              name: z.string(),
              kind: z.number(),
              attributes: keyValues,
              links: z.array(z.object({ traceId: z.string(), spanId: z.string() })).default([]),
            }),
          ),
        }),
      ),
    }),
  ),
});

function flat(values: z.infer<typeof keyValues>): Record<string, string | number | boolean> {
  return Object.fromEntries(
    values.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue === undefined ? undefined : Number(value.intValue)) ??
        value.boolValue ??
        value.doubleValue ??
        "",
    ]),
  );
}

export async function startOtlpReceiver(behaviour: ReceiverBehaviour = "accepts"): Promise<OtlpReceiver> {
  const exports: OtlpReceiver["exports"] = [];
  const spans: ReceivedSpan[] = [];
  const stalled: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on("data", (chunk: Buffer) => parts.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(parts);
      const contentType = req.headers["content-type"] ?? "";
      exports.push({ path: req.url ?? "", contentType, body });
      if (behaviour === "never-answers") {
        stalled.push(res);
        return;
      }
      if (behaviour === "answers-500") {
        res.writeHead(500, { "content-type": "text/plain" }).end("collector broken");
        return;
      }
      if (contentType.includes("json")) {
        for (const rs of jsonExport.parse(JSON.parse(body.toString("utf8"))).resourceSpans)
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              spans.push({ ...s, attributes: flat(s.attributes), resource: flat(rs.resource.attributes) });
      }
      res.writeHead(200, { "content-type": contentType }).end(contentType.includes("json") ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    spans,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of stalled) res.destroy();
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
