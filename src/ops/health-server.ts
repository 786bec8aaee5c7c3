import type { AddressInfo } from "node:net";
import { fastify } from "fastify";
import { formatHttpAddr, type HttpAddr } from "../config/http-addr.js";
import { HttpAddrInUseError } from "./errors/http-addr-in-use-error.js";
import { HttpAddrUnavailableError } from "./errors/http-addr-unavailable-error.js";
import type { Readiness } from "./readiness.js";

/** The health probes' HTTP server of a long-running process (docs/operations.md, "Health probes"). */
export interface HealthServer {
  /** Where it listens, e.g. http://127.0.0.1:9464 (with the port taken when HTTP_ADDR's was 0). */
  readonly url: string;
  /** Stops listening; requests under way are answered first. */
  close(): Promise<void>;
}

export interface HealthServerOptions {
  readonly addr: HttpAddr;
  /** Answers /readyz. */
  readonly readiness: () => Promise<Readiness>;
}

/**
 * Serves `GET /healthz` (200 `ok` while the event loop answers) and `GET /readyz` (200, or 503 with the
 * checks that failed). Fails with a typed error naming HTTP_ADDR when it cannot listen there.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const app = fastify({ logger: false });
  app.get("/healthz", async (_request, reply) => reply.type("text/plain; charset=utf-8").send("ok"));
  app.get("/readyz", async (_request, reply) => {
    const readiness = await options.readiness();
    return reply
      .code(readiness.ready ? 200 : 503)
      .header("cache-control", "no-store")
      .send({
        status: readiness.ready ? "ready" : "not ready",
        failed: readiness.failed,
        checks: readiness.checks,
      });
  });
  const addr = formatHttpAddr(options.addr);
  try {
    await app.listen({ host: options.addr.host, port: options.addr.port });
  } catch (error) {
    await app.close();
    throw listenError(addr, error);
  }
  return { url: `http://${listeningOn(app.server.address(), addr)}`, close: () => app.close() };
}

function listenError(addr: string, error: unknown): Error {
  const code = error instanceof Error && "code" in error ? String(error.code) : undefined;
  if (code === "EADDRINUSE") return new HttpAddrInUseError(addr, { cause: error });
  const reason =
    code === "EACCES"
      ? "permission denied: ports below 1024 need privileges"
      : code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN"
        ? "not an address of this host"
        : (code ?? (error instanceof Error ? error.message : String(error)));
  return new HttpAddrUnavailableError(addr, reason, { cause: error });
}

/** host:port the server took, from the socket (for port 0); the setting when the socket says nothing. */
function listeningOn(address: AddressInfo | string | null, fallback: string): string {
  if (address === null || typeof address === "string") return fallback;
  return formatHttpAddr({ host: address.address, port: address.port });
}
