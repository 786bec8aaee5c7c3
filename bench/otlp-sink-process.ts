// An OTLP/HTTP trace receiver in its own process for `BENCH_TRACE_PAIRS` (bench/submit.ts): it takes
// every export as a collector would (200, an empty response) and counts requests and bytes, and the
// spans of JSON exports, without holding the measured process's event loop.
import { createServer } from "node:http";
import { z } from "zod";

const counts = { requests: 0, bytes: 0, jsonSpans: 0 };
const jsonExport = z.object({
  resourceSpans: z.array(z.object({ scopeSpans: z.array(z.object({ spans: z.array(z.unknown()) })) })),
});

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts));
    return;
  }
  const parts: Buffer[] = [];
  req.on("data", (chunk: Buffer) => parts.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(parts);
    counts.requests++;
    counts.bytes += body.length;
    const json = (req.headers["content-type"] ?? "").includes("json");
    if (json) {
      const parsed = jsonExport.safeParse(JSON.parse(body.toString("utf8")));
      if (parsed.success)
        for (const r of parsed.data.resourceSpans)
          for (const s of r.scopeSpans) counts.jsonSpans += s.spans.length;
    }
    res
      .writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" })
      .end(json ? "{}" : "");
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
