import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { coerceError } from "../errors/relay-error.js";
import { silentLogger, type Logger } from "../log/logger.js";
import { handleAdmin } from "./admin-handler.js";
import type { Capacity, CapacityPatch } from "./capacity.js";
import { sendProblem } from "./http-reply.js";
import { handleInvoice } from "./invoice-handler.js";
import { parseOptions, type Faults, type FaultsPatch, type SimulatorOptions } from "./options.js";
import { problem, problems } from "./problem.js";
import type { Attempt } from "./request-log.js";
import { SimulatorState, type SimulatorEvents } from "./simulator-state.js";
import type { SimulatorStats } from "./stats.js";
import { handleToken } from "./token-handler.js";
import type { EventEmitter } from "node:events";

export interface SimulatorHandle {
  /** Base URL, e.g. `http://127.0.0.1:43125` (no trailing slash): the client's INVOICE_API_URL. */
  readonly url: string;
  readonly port: number;
  stats(): SimulatorStats;
  /** Attempts of one key still in the request log, oldest first. */
  attempts(key: string): readonly Attempt[];
  /** The current faults; `setFaults` changes only the fields given and returns the result. */
  faults(): Faults;
  setFaults(patch: FaultsPatch): Faults;
  setApiKey(key: string): void;
  /** The capacity model's limit (null: none); `setCapacity` changes the fields given, null removes it. */
  capacity(): Capacity | null;
  setCapacity(patch: CapacityPatch): Capacity | null;
  /** Forgets finished keys (as if their retention expired); effect counts are kept. Returns how many. */
  forgetKeys(): number;
  /** Everything recorded is dropped, and the faults and API key given at start are restored. */
  reset(): void;
  /** `in-flight` and `attempt` events, for tests that must act at a precise moment. */
  readonly events: EventEmitter<SimulatorEvents>;
  /** Stops listening and destroys every connection, keep-alive ones included; waiting answers are dropped. */
  close(): Promise<void>;
}

export interface SimulatorDependencies {
  /** Receives unexpected handler errors; per-request logging is deliberately absent (hot path). */
  readonly logger?: Logger;
}

/** Starts the invoice routing service simulator. Options are validated; see `simulatorOptionsSchema`. */
export async function startSimulator(
  options: SimulatorOptions = {},
  deps: SimulatorDependencies = {},
): Promise<SimulatorHandle> {
  const resolved = parseOptions(options);
  const logger = deps.logger ?? silentLogger();
  const sim = new SimulatorState(resolved);

  const server = createServer({ keepAlive: true }, (req, res) => {
    route(req, res, sim).catch((thrown: unknown) => {
      const error = coerceError(thrown);
      logger.error({ err: error, method: req.method, url: req.url }, "simulator handler failed");
      if (res.headersSent || res.destroyed) res.destroy();
      else
        sendProblem(
          res,
          problem("internal", "Internal Server Error", 500, "The simulator failed unexpectedly."),
        );
    });
  });
  // Clients keep connections alive for 4-5 s; outlive that so they, not we, close idle sockets.
  server.keepAliveTimeout = 10_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(resolved.port, resolved.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = resolved.host.includes(":") ? `[${resolved.host}]` : resolved.host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    stats: () => sim.stats(),
    attempts: (key) => sim.log.forKey(key.toLowerCase()),
    faults: () => sim.faults,
    setFaults: (patch) => sim.setFaults(patch),
    capacity: () => sim.capacity.limit,
    setCapacity: (patch) => sim.setCapacity(patch),
    setApiKey: (key) => {
      sim.setApiKey(key);
    },
    forgetKeys: () => sim.store.forgetFinished(),
    reset: () => {
      sim.reset();
    },
    events: sim.events,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        sim.endNight();
        sim.pending.cancelAll();
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function route(req: IncomingMessage, res: ServerResponse, sim: SimulatorState): Promise<void> {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? "" : url.slice(q + 1);
  const method = req.method ?? "GET";
  switch (path) {
    case "/api/v1/invoices":
      if (method === "POST") return handleInvoice(req, res, sim);
      break;
    case "/api/v1/auth/token":
      if (method === "POST") return handleToken(req, res, sim);
      break;
    default:
      if (path.startsWith("/__sim/")) return handleAdmin(req, res, sim, path, query);
      sendProblem(res, problems.notFound(path));
      return Promise.resolve();
  }
  sendProblem(res, problems.methodNotAllowed(method, "POST"), { allow: "POST" });
  return Promise.resolve();
}
