import { connect } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serveOps } from "../../src/cli/serve-ops.js";
import { loadConfig } from "../../src/config/load.js";
import type { HttpAddr } from "../../src/config/http-addr.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { createLogger } from "../../src/log/logger.js";
import { testPrefix, testRedis, testRedisUrl } from "../support/redis.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const INVOICE = "INV-HOSTCHECK-0001";
const cleanups = cleanupsAfterEach();

interface Served {
  readonly port: number;
  readonly batch: string;
}

/** The whole HTTP server of a process (probes, /metrics, console) with one reported batch whose report holds INVOICE. */
async function served(addr: HttpAddr, env: Record<string, string> = {}): Promise<Served> {
  const prefix = testPrefix();
  const config = loadConfig({ REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix, ...env });
  const dir = await mkdtemp(join(tmpdir(), "served-hosts-"));
  const report = join(dir, "night.csv.results.csv");
  await writeFile(report, `line,external_id,status\n2,${INVOICE},succeeded\n`);
  const redis = testRedis();
  const batches = new BatchStore(redis, prefix);
  const batch = "20261124T010000Z-abcdef";
  await batches.open({
    id: batch,
    file: "night.csv",
    format: "csv",
    path: join(dir, "night.csv"),
    host: "t",
  });
  await batches.update(batch, { state: "reported", rows: 1, report_csv: report });
  const server = await serveOps(
    config,
    addr,
    new AbortController().signal,
    createLogger({ level: "silent" }),
  );
  cleanups.push(async () => {
    await server.close();
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  });
  const port = Number(new URL(server.url ?? "").port);
  return { port, batch };
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** Sends `request` as written (any Host, none, or an absolute-form target) over a socket to 127.0.0.1. */
async function send(port: number, request: string): Promise<Answer> {
  const text = await new Promise<string>((resolve, reject) => {
    let got = "";
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    socket.on("data", (chunk: Buffer) => (got += chunk.toString()));
    socket.on("error", reject);
    socket.on("close", () => {
      resolve(got);
    });
  });
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? "0");
  return { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) };
}

/** HTTP/1.0, so the answer ends with the connection and is never chunked. */
const get = (port: number, path: string, host: string | undefined): Promise<Answer> =>
  send(port, `GET ${path} HTTP/1.0\r\n${host === undefined ? "" : `Host: ${host}\r\n`}\r\n`);

describe("the Host a loopback server answers to", () => {
  it("when a request names the console by its own address or a loopback name, then the report is served", async () => {
    const { port, batch } = await served({ host: "127.0.0.1", port: 0 });
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const answer = await get(port, `/batches/${batch}/report.csv`, host);
      expect(answer.status, host).toBe(200);
      expect(answer.body, host).toContain(INVOICE);
    }
  });

  it("when a request names another host (a DNS rebinding page), the right name on another port, another host's IP or no host at all, then it is refused with 421 and no invoice data", async () => {
    const { port, batch } = await served({ host: "127.0.0.1", port: 0 });
    for (const host of [`attacker.example:${port}`, "127.0.0.1:1", `10.0.0.7:${port}`, undefined]) {
      const answer = await get(port, `/batches/${batch}/report.csv`, host);
      expect(answer.status, String(host)).toBe(421);
      expect(answer.body, String(host)).not.toContain(INVOICE);
      expect(answer.body, String(host)).toContain("CONSOLE_ALLOWED_HOSTS");
    }
  });

  it("when a request is in absolute form naming another host, then it is refused with 421 though its Host header is right", async () => {
    const { port, batch } = await served({ host: "127.0.0.1", port: 0 });
    const answer = await send(
      port,
      `GET http://attacker.example:${port}/batches/${batch}/report.csv HTTP/1.0\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
    );
    expect(answer.status).toBe(421);
    expect(answer.body).not.toContain(INVOICE);
  });

  it("when a sign-in is posted with a forged Host and a matching forged Origin, then it is refused before the sign-in runs", async () => {
    const { port } = await served(
      { host: "127.0.0.1", port: 0 },
      { CONSOLE_TOKEN: "console-token-0123456789abcdef" },
    );
    const body = "token=console-token-0123456789abcdef";
    const answer = await send(
      port,
      `POST /login HTTP/1.0\r\nHost: attacker.example:${port}\r\nOrigin: http://attacker.example:${port}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(answer.status).toBe(421);
  });

  it("when the probes and /metrics are asked by another name on a loopback server, then they are refused too: nothing outside the host reaches them", async () => {
    const { port } = await served({ host: "127.0.0.1", port: 0 });
    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      expect((await get(port, path, `attacker.example:${port}`)).status, path).toBe(421);
      expect((await get(port, path, `127.0.0.1:${port}`)).status, path).toBe(200);
    }
  });
});

describe("a server listening beyond loopback (a pod's address)", () => {
  it("when a kubelet or Prometheus asks the probes or /metrics by the pod's IP or a service name, then they answer, while the console refuses those names", async () => {
    const { port, batch } = await served({ host: "0.0.0.0", port: 0 });
    for (const host of [`10.244.1.7:${port}`, `relay-metrics.ops.svc:${port}`]) {
      expect((await get(port, "/healthz", host)).status, host).toBe(200);
      expect((await get(port, "/readyz", host)).status, host).toBe(200);
      const metrics = await get(port, "/metrics", host);
      expect(metrics.status, host).toBe(200);
      expect(metrics.body).toContain("invoice_relay_redis_up 1");
      const report = await get(port, `/batches/${batch}/report.csv`, host);
      expect(report.status, host).toBe(421);
      expect(report.body).not.toContain(INVOICE);
      expect((await get(port, "/", host)).status, host).toBe(421);
    }
    expect((await get(port, `/batches/${batch}/report.csv`, `localhost:${port}`)).status).toBe(200);
  });

  it("when CONSOLE_ALLOWED_HOSTS names the service, then the console answers to it", async () => {
    const { port, batch } = await served(
      { host: "0.0.0.0", port: 0 },
      { CONSOLE_ALLOWED_HOSTS: "relay.ops.svc" },
    );
    const report = await get(port, `/batches/${batch}/report.csv`, `relay.ops.svc:${port}`);
    expect(report.status).toBe(200);
    expect(report.body).toContain(INVOICE);
  });
});
