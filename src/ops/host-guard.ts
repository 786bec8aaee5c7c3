import type { FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "../log/logger.js";
import { hostAllowed, servedPort, type HostPolicy } from "./host-policy.js";

/** Which requests the HTTP server answers, by the host name they are addressed to. */
export interface HostGuard {
  readonly policy: HostPolicy;
  /** Routes answered whatever the Host (the probes and /metrics on a server reachable beyond loopback). */
  readonly open: readonly string[];
  readonly logger: Logger;
}

/** Names logged once each, at most this many: a rebinding page must not be able to fill the log. */
const LOGGED_NAMES = 100;

/**
 * An onRequest hook that answers 421 Misdirected Request, before any route runs, to a request addressed
 * to a name the server is not served as: what a page that rebinds its own name to this machine sends.
 */
export function hostGuard(guard: HostGuard) {
  const open = new Set(guard.open);
  const logged = new Set<string>();
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (open.has(request.routeOptions.url ?? "")) return;
    const port = servedPort(guard.policy, request.socket);
    if (hostAllowed(guard.policy, { url: request.raw.url ?? "/", host: request.headers.host }, port)) return;
    const name = request.headers.host ?? "(none)";
    if (logged.size < LOGGED_NAMES && !logged.has(name)) {
      logged.add(name);
      guard.logger.warn(
        { host: name.slice(0, 100), ip: request.ip },
        "HTTP server: refused a request addressed to a host name it is not served as (421); " +
          "if that name is yours, add it to CONSOLE_ALLOWED_HOSTS",
      );
    }
    await reply
      .code(421)
      .header("cache-control", "no-store")
      .header("x-content-type-options", "nosniff")
      .type("text/plain; charset=utf-8")
      .send(
        "421 Misdirected Request: this server does not answer to the host name this request was sent to.\n" +
          "Open it at the address it is served at, or have its operator add the name to " +
          'CONSOLE_ALLOWED_HOSTS (docs/operations.md, "Web console").\n',
      );
  };
}
