import type { IncomingMessage, ServerResponse } from "node:http";
import { sendEmpty, sendJson, sendProblem } from "./http-reply.js";
import { parseIdempotencyKey } from "./invoice-request.js";
import { problems } from "./problem.js";
import { readJsonRequest } from "./json-request.js";
import type { Attempt } from "./request-log.js";
import { SimulatorOptionsError } from "./simulator-options-error.js";
import type { SimulatorState } from "./simulator-state.js";

type AdminHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  sim: SimulatorState,
  query: string,
) => unknown;

/**
 * `/__sim/*`: the test and benchmark controls. They ask for no credentials on purpose: they exist for
 * local testing only, and the simulator binds to loopback unless told otherwise.
 */
const ROUTES: Readonly<Record<string, Readonly<Record<string, AdminHandler>>>> = {
  "/__sim/health": {
    GET: (_req, res, sim) => {
      sendJson(res, 200, JSON.stringify({ status: "ok", ruleset_version: sim.options.rulesetVersion }));
    },
  },
  "/__sim/stats": {
    GET: (_req, res, sim) => {
      sendJson(res, 200, JSON.stringify(sim.stats()));
    },
  },
  "/__sim/requests": {
    GET: (_req, res, sim, query) => {
      requestsOfKey(res, sim, query);
    },
  },
  "/__sim/developer-keys": {
    GET: (_req, res, sim) => {
      sendJson(res, 200, JSON.stringify({ developerKeys: sim.developerKeys.list() }));
    },
  },
  "/__sim/faults": {
    GET: (_req, res, sim) => {
      sendJson(res, 200, JSON.stringify({ faults: sim.faults }));
    },
    POST: changeSetting("faults", (sim, value) => sim.setFaults(value)),
  },
  "/__sim/capacity": {
    GET: (_req, res, sim) => {
      sendJson(res, 200, JSON.stringify({ capacity: sim.capacity.limit }));
    },
    POST: changeSetting("capacity", (sim, value) => sim.setCapacity(value)),
  },
  "/__sim/reset": {
    POST: (_req, res, sim) => {
      sim.reset();
      sendEmpty(res, 204);
    },
  },
  "/__sim/forget-keys": {
    POST: (_req, res, sim) => {
      sendJson(res, 200, JSON.stringify({ forgotten: sim.store.forgetFinished() }));
    },
  },
};

export async function handleAdmin(
  req: IncomingMessage,
  res: ServerResponse,
  sim: SimulatorState,
  path: string,
  query: string,
): Promise<void> {
  const methods = ROUTES[path];
  if (methods === undefined) {
    sendProblem(res, problems.notFound(path));
    return;
  }
  const method = req.method ?? "GET";
  const handler = methods[method];
  if (handler === undefined) {
    const allowed = Object.keys(methods).join(", ");
    sendProblem(res, problems.methodNotAllowed(method, allowed), { allow: allowed });
    return;
  }
  await handler(req, res, sim, query);
}

function requestsOfKey(res: ServerResponse, sim: SimulatorState, query: string): void {
  const parsed = parseIdempotencyKey(new URLSearchParams(query).get("key") ?? undefined);
  if (!parsed.ok) {
    sendProblem(res, problems.badQuery("Pass the idempotency key to look up as ?key=<uuid>."));
    return;
  }
  const { key } = parsed;
  const attempts = sim.log.forKey(key).map(publicAttempt);
  sendJson(
    res,
    200,
    JSON.stringify({ key, effects: sim.ledger.effectsOf(key), attempts, logDropped: sim.log.dropped }),
  );
}

/** An attempt as JSON: ISO time, and `null` rather than absent fields so every entry has one shape. */
function publicAttempt(a: Attempt) {
  return {
    at: new Date(a.at).toISOString(),
    status: a.status,
    outcome: a.outcome,
    lost: a.lost,
    idempotencyKey: a.idempotencyKey ?? null,
    bodySha256: a.bodySha256 ?? null,
    authorized: a.authorized,
    traceparent: a.traceparent ?? null,
  };
}

/**
 * A POST that changes one of the simulator's settings: the JSON body is applied, the setting as it now
 * stands is answered, and a value the simulator refuses is a 422 naming `field`.
 */
function changeSetting(field: string, apply: (sim: SimulatorState, value: unknown) => unknown): AdminHandler {
  return async (req, res, sim) => {
    const parsed = await readJsonRequest(req, res, sim.options.maxBodyBytes);
    if (parsed === undefined) return;
    try {
      sendJson(res, 200, JSON.stringify({ [field]: apply(sim, parsed.value) }));
    } catch (error) {
      if (!(error instanceof SimulatorOptionsError)) throw error;
      sendProblem(res, problems.invalidBody([{ field, message: error.message }], field));
    }
  };
}
