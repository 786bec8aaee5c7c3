import type { Routes } from "./http-server.js";
import type { Readiness } from "./readiness.js";

/**
 * `GET /healthz` (200 `ok` while the event loop answers) and `GET /readyz` (200, or 503 with the checks
 * that failed); docs/operations.md, "Health probes".
 */
export function healthRoutes(readiness: () => Promise<Readiness>): Routes {
  return (app) => {
    app.get("/healthz", async (_request, reply) => reply.type("text/plain; charset=utf-8").send("ok"));
    app.get("/readyz", async (_request, reply) => {
      const answer = await readiness();
      return reply
        .code(answer.ready ? 200 : 503)
        .header("cache-control", "no-store")
        .send({ status: answer.ready ? "ready" : "not ready", failed: answer.failed, checks: answer.checks });
    });
  };
}
