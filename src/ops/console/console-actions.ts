import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { BatchMeta } from "../../ledger/batch-store.js";
import type { Logger } from "../../log/logger.js";
import { servedPort, type HostPolicy } from "../host-policy.js";
import { SESSION_COOKIE, SESSION_SECONDS, fromServedPage, type ConsoleAuth } from "./auth.js";
import { batchIdParam, notABatchId } from "./batch-param.js";
import { loginPage } from "./login-page.js";
import type { RetryBatchPort } from "./ports.js";
import { sendPage, sendProblem, viewerOf } from "./respond.js";
import { holdBack, noteWrongToken, type WrongTokens } from "./wrong-tokens.js";

export interface ActionDeps {
  readonly auth: ConsoleAuth;
  readonly retry: RetryBatchPort;
  readonly knownBatch: (id: string) => Promise<BatchMeta | undefined>;
  readonly logger: Logger;
  readonly hosts: HostPolicy;
  readonly wrongTokens: WrongTokens;
}

const loginBody = z.object({ token: z.string().max(1024) });
const csrfBody = z.object({ csrf: z.string().max(200).optional() }).catch({});

/**
 * The console's writes: sign in and out, and "retry this batch's failed rows". Without CONSOLE_TOKEN
 * every POST is 403; while the deployment refuses writing (`auth.refusal`) every action is 503 saying why; with it, a POST without a token or session is 401, and a session's form post must
 * carry its CSRF token and come from a page of a served host name (else 403). A bearer token needs
 * neither: no browser sends one on its own. Wrong tokens are held back by `deps.wrongTokens`.
 */
export function actionRoutes(app: FastifyInstance, deps: ActionDeps): void {
  const { auth } = deps;
  const fromConsole = (request: FastifyRequest) =>
    fromServedPage(request.headers, deps.hosts, servedPort(deps.hosts, request.socket));
  app.addHook("preHandler", async (request, reply) => {
    if (request.method !== "POST") return;
    const viewer = viewerOf(auth, request);
    if (!auth.writable)
      return sendProblem(
        reply,
        viewer,
        403,
        "Read-only",
        "This console is read-only: set CONSOLE_TOKEN to enable its actions.",
      );
    const url = request.routeOptions.url;
    if (auth.refusal !== undefined && url !== "/login" && url !== "/logout")
      return sendProblem(reply, viewer, 503, "Writing refused", auth.refusal);
    if (url === "/login") {
      if (!fromConsole(request)) return forged(reply, request, auth);
      return;
    }
    const proof = auth.proofOf(request.headers.authorization, request.headers.cookie);
    if (proof.kind === "none")
      return sendProblem(
        reply,
        viewer,
        401,
        "Sign in first",
        "Sign in with the console token (or send Authorization: Bearer <token>).",
      );
    if (proof.kind === "session") {
      const { csrf } = csrfBody.parse(request.body ?? {});
      if (!fromConsole(request) || !auth.csrfMatches(proof.nonce, csrf)) return forged(reply, request, auth);
    }
  });

  app.get("/login", async (request, reply) => {
    const viewer = viewerOf(auth, request);
    if (!auth.writable)
      return sendProblem(
        reply,
        viewer,
        404,
        "Read-only",
        "This console is read-only: CONSOLE_TOKEN is not set, so there is nothing to sign in to.",
      );
    return sendPage(reply, "Sign in", viewer, loginPage(undefined));
  });

  app.post("/login", async (request, reply) => {
    const waitMs = deps.wrongTokens.throttle.waitMs(request.ip);
    if (waitMs > 0) return holdBack(reply, request, deps.wrongTokens, waitMs, "sign-in");
    const parsed = loginBody.safeParse(request.body);
    if (!parsed.success || !(await auth.checkToken(parsed.data.token))) {
      noteWrongToken(request, deps.wrongTokens, "a sign-in with a wrong token");
      return sendPage(
        reply,
        "Sign in",
        viewerOf(auth, request),
        loginPage("That is not the console token."),
        401,
      );
    }
    deps.wrongTokens.throttle.succeeded(request.ip);
    const secure = request.protocol === "https" || request.headers["x-forwarded-proto"] === "https";
    return reply
      .header(
        "set-cookie",
        `${SESSION_COOKIE}=${auth.newSession()}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_SECONDS}${secure ? "; Secure" : ""}`,
      )
      .redirect("/", 303);
  });

  app.post("/logout", async (_request, reply) =>
    reply
      .header("set-cookie", `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`)
      .redirect("/", 303),
  );

  app.post("/batches/:id/retry", async (request, reply) => {
    const id = batchIdParam(request.params);
    if (id === undefined) return notABatchId(reply, viewerOf(auth, request));
    if ((await deps.knownBatch(id)) === undefined)
      return sendProblem(reply, viewerOf(auth, request), 404, "No such batch", `No batch ${id} to retry.`);
    const outcome = await deps.retry(id);
    deps.logger.info({ batch: id, ...outcome }, "web console: retried the batch's failed rows");
    return reply.redirect(`/batches/${encodeURIComponent(id)}?retried=${outcome.requeued}`, 303);
  });
}

function forged(reply: FastifyReply, request: FastifyRequest, auth: ConsoleAuth): FastifyReply {
  return sendProblem(
    reply,
    viewerOf(auth, request),
    403,
    "Refused",
    "This form was not sent from a page of this console (origin or CSRF token missing or wrong); reload the page and try again.",
  );
}
