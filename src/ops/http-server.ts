import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { formatHttpAddr, type HttpAddr } from "../config/http-addr.js";
import { HttpAddrInUseError } from "./errors/http-addr-in-use-error.js";
import { HttpAddrUnavailableError } from "./errors/http-addr-unavailable-error.js";
import { hostGuard, type HostGuard } from "./host-guard.js";

/** The HTTP server of a long-running process on HTTP_ADDR: probes, metrics, the console. */
export interface HttpServer {
  /** Where it listens, e.g. http://127.0.0.1:9464 (with the port taken when HTTP_ADDR's was 0). */
  readonly url: string;
  /** Stops listening; requests under way are answered first. */
  close(): Promise<void>;
}

/** One set of routes (a fastify plugin body); they are registered in order before the server listens. */
export type Routes = (app: FastifyInstance) => void | Promise<void>;

export interface HttpServerOptions {
  readonly addr: HttpAddr;
  readonly routes: readonly Routes[];
  /** The host names it answers to; every other request is refused before any route runs. */
  readonly hosts: HostGuard;
}

/** The server's fastify instance, not listening yet (tests inject into it): the Host check, then `routes`. */
export async function httpApp(options: HttpServerOptions): Promise<FastifyInstance> {
  // Loaded here: a pass without HTTP_ADDR serves nothing.
  const { fastify } = await import("fastify");
  const app = fastify({ logger: false });
  app.addHook("onRequest", hostGuard(options.hosts));
  for (const routes of options.routes) await app.register(async (scope) => routes(scope));
  return app;
}

/** Listens on `addr` with `routes`. Fails with a typed error naming HTTP_ADDR when it cannot listen there. */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const app = await httpApp(options);
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
