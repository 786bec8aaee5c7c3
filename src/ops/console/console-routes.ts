import { createReadStream } from "node:fs";
import { access } from "node:fs/promises";
import { basename } from "node:path";
import formbody from "@fastify/formbody";
import { liveSecret } from "../../config/live-secret.js";
import { loggedSecretEvents } from "../../log/secret-mask.js";
import { z } from "zod";
import type { BatchMeta } from "../../ledger/batch-store.js";
import type { Ledger } from "../../ledger/ledger.js";
import { passSeriesEnd } from "../../ledger/passes.js";
import { submissionHeldBecause } from "../../queue/hold-reason.js";
import type { Routes } from "../http-server.js";
import type { OpsContext, OpsRoutes } from "../ops-server.js";
import { batchIdParam, notABatchId, passIdParam } from "./batch-param.js";
import { passesPage, passPage } from "./passes-page.js";
import { actionRoutes } from "./console-actions.js";
import { ConsoleAuth } from "./auth.js";
import { batchPage } from "./batch-page.js";
import { batchesPage, waitsForService } from "./batches-page.js";
import {
  ROW_FILTERS,
  type BatchesPort,
  type BatchRowsPort,
  type DeploymentPort,
  type PassesPort,
  type RetryBatchPort,
  type WritesRefusedPort,
} from "./ports.js";
import { queuePage } from "./queue-page.js";
import { SECURITY_HEADERS, sendPage, sendProblem, viewerOf } from "./respond.js";
import { searchPage } from "./search-page.js";
import { lookUp } from "./search.js";
import { SIGN_IN_LIMITS, SignInThrottle } from "./sign-in-throttle.js";
import { STYLESHEET } from "./stylesheet.js";
import { bearerCheck, type WrongTokens } from "./wrong-tokens.js";
import { shownName } from "../../names/shown-text.js";

/** How many batches `/` lists (and passes `/passes`, and a pass's files), and rows a batch page shows. */
const BATCHES_SHOWN = 100;
export const ROWS_PER_PAGE = 100;

/** What the console reads and does, each through a port: its routes reach Redis through nothing else. */
export interface ConsolePorts {
  readonly batches: (ctx: OpsContext) => BatchesPort;
  readonly rows: (ctx: OpsContext) => BatchRowsPort;
  /** The deployment's view, the queue page's one reading; closed with the server. */
  readonly deployment: (ctx: OpsContext) => DeploymentPort;
  readonly retry: (ctx: OpsContext) => RetryBatchPort;
  readonly writesRefused: (ctx: OpsContext) => WritesRefusedPort;
  /** The passes and what the fleet sent over each. */
  readonly passes: (ctx: OpsContext) => PassesPort;
  /** The ledger the search reads (src/ledger/ledger.ts). */
  readonly ledger: (ctx: OpsContext) => Pick<Ledger, "keyOfExternalId" | "getMany">;
  /** The clock of sessions and of the wrong-token counts (tests move it). */
  readonly now?: () => number;
}

const batchQuery = z.object({
  status: z.enum(ROW_FILTERS).optional().catch(undefined),
  after: z.coerce.number().int().min(0).catch(0).default(0),
  retried: z.coerce.number().int().min(0).optional().catch(undefined),
});
const searchQuery = z.object({ q: z.string().trim().max(300).catch("").default("") });

/** The web console at `/` (docs/operations.md, "Web console"): server-rendered pages, no script. */
export function consoleRoutes(ports: ConsolePorts): OpsRoutes {
  return (ctx) => consoleScope(ctx, ports);
}

function consoleScope(ctx: OpsContext, ports: ConsolePorts): Routes {
  return async (app) => {
    const now = ports.now ?? Date.now;
    const token = liveSecret(ctx.config, "consoleToken", loggedSecretEvents(ctx.logger));
    const auth = new ConsoleAuth(token, now);
    const wrongTokens: WrongTokens = {
      auth,
      throttle: new SignInThrottle(SIGN_IN_LIMITS, now),
      logger: ctx.logger,
      now,
    };
    const prefix = ctx.config.queuePrefix;
    const batches = ports.batches(ctx);
    const deployment = ports.deployment(ctx);
    app.addHook("onClose", async () => {
      token.close();
      await deployment.close();
    });
    await app.register(formbody, { bodyLimit: 4096 });
    const writesRefused = ports.writesRefused(ctx);
    app.addHook("onRequest", async () => {
      auth.refusal = await writesRefused();
    });
    app.addHook("onRequest", bearerCheck(wrongTokens));
    app.addHook("onSend", async (_request, reply, payload) => {
      reply.headers(SECURITY_HEADERS);
      return payload;
    });
    app.setErrorHandler(async (error, request, reply) => {
      ctx.logger.warn({ err: error, url: request.url }, "web console: a request failed");
      return sendProblem(
        reply,
        viewerOf(auth, request),
        500,
        "Not available",
        "The console could not read Redis or the batch's files; see the process's log, and try again.",
      );
    });
    const rows = ports.rows(ctx);
    const knownBatch = async (id: string): Promise<BatchMeta | undefined> => batches.get(id);
    // Why the batches shown wait, read only when one does.
    const heldFor = async (metas: readonly BatchMeta[]): Promise<string | undefined> =>
      metas.some(waitsForService) ? submissionHeldBecause(await deployment.read()) : undefined;

    app.get("/console.css", async (_request, reply) =>
      reply.type("text/css; charset=utf-8").header("cache-control", "max-age=300").send(STYLESHEET),
    );

    app.get("/", async (request, reply) => {
      const ids = await batches.newest(BATCHES_SHOWN);
      const metas = (await Promise.all(ids.map((id) => batches.get(id)))).filter(
        (m): m is BatchMeta => m !== undefined,
      );
      return sendPage(
        reply,
        "Batches",
        viewerOf(auth, request),
        batchesPage(metas, await batches.count(), await heldFor(metas)),
      );
    });

    app.get("/batches/:id", async (request, reply) => {
      const viewer = viewerOf(auth, request);
      const id = batchIdParam(request.params);
      if (id === undefined) return notABatchId(reply, viewer);
      const q = batchQuery.parse(request.query);
      const meta = await knownBatch(id);
      if (meta === undefined) return noBatch(reply, viewer, id, prefix);
      const page = await rows.page(meta, { status: q.status, after: q.after, limit: ROWS_PER_PAGE });
      const notice =
        q.retried === undefined
          ? undefined
          : `${q.retried} failed row(s) re-enqueued with their original keys: they are queued again.`;
      return sendPage(
        reply,
        shownName(meta.file),
        viewer,
        batchPage({
          meta,
          page,
          status: q.status,
          after: q.after,
          viewer,
          notice,
          held: await heldFor([meta]),
        }),
      );
    });

    for (const [route, field, type] of [
      ["report.csv", "report_csv", "text/csv; charset=utf-8"],
      ["summary.json", "summary_json", "application/json; charset=utf-8"],
    ] as const)
      app.get(`/batches/:id/${route}`, async (request, reply) => {
        const viewer = viewerOf(auth, request);
        const id = batchIdParam(request.params);
        if (id === undefined) return notABatchId(reply, viewer);
        const meta = await knownBatch(id);
        if (meta === undefined) return noBatch(reply, viewer, id, prefix);
        // Only the file the batch's record names: no path comes from the request.
        const path = meta[field];
        const there =
          path !== undefined &&
          (await access(path).then(
            () => true,
            () => false,
          ));
        if (!there)
          return sendProblem(
            reply,
            viewer,
            404,
            "No report",
            `Batch ${id} has no ${route} on this host (yet).`,
          );
        return reply
          .type(type)
          .header("content-disposition", `inline; filename="${basename(path).replace(/[^\w.-]/g, "_")}"`)
          .send(createReadStream(path));
      });

    app.get("/search", async (request, reply) => {
      const { q } = searchQuery.parse(request.query);
      const records = q === "" ? [] : await lookUp(ports.ledger(ctx), q);
      return sendPage(reply, "Search", viewerOf(auth, request), searchPage(q, records));
    });

    const passes = ports.passes(ctx);
    app.get("/passes", async (request, reply) => {
      const [newest, count] = await Promise.all([passes.newest(BATCHES_SHOWN), passes.count()]);
      const at = now();
      const latest = newest[0];
      const points =
        latest === undefined ? [] : await passes.series(latest.startedAt, passSeriesEnd(latest) ?? at);
      return sendPage(reply, "Passes", viewerOf(auth, request), passesPage(newest, count, points, at));
    });

    app.get("/passes/:id", async (request, reply) => {
      const viewer = viewerOf(auth, request);
      const id = passIdParam(request.params);
      const pass = id === undefined ? undefined : await passes.get(id);
      if (pass === undefined)
        return sendProblem(
          reply,
          viewer,
          404,
          "No such pass",
          `No pass ${id ?? "with that id"} in QUEUE_PREFIX=${prefix}: it may have passed RESULTS_RETENTION. The passes page lists those kept.`,
        );
      const at = now();
      const [points, metas] = await Promise.all([
        passes.series(pass.startedAt, passSeriesEnd(pass) ?? at),
        Promise.all(pass.batches.slice(0, BATCHES_SHOWN).map((b) => batches.get(b))),
      ]);
      const known = metas.filter((m): m is BatchMeta => m !== undefined);
      return sendPage(reply, `Pass ${pass.id}`, viewer, passPage(pass, points, known, at));
    });

    app.get("/queue", async (request, reply) =>
      sendPage(reply, "Queue", viewerOf(auth, request), queuePage(await deployment.read())),
    );

    actionRoutes(app, {
      auth,
      retry: ports.retry(ctx),
      knownBatch,
      logger: ctx.logger,
      hosts: ctx.hosts,
      wrongTokens,
    });
  };
}

function noBatch(
  reply: Parameters<typeof sendProblem>[0],
  viewer: Parameters<typeof sendProblem>[1],
  id: string,
  prefix: string,
) {
  return sendProblem(
    reply,
    viewer,
    404,
    "No such batch",
    `No batch ${id} in QUEUE_PREFIX=${prefix}: it may have passed RESULTS_RETENTION, or belong to another deployment.`,
  );
}
