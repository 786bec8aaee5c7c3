import type { FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "../../log/logger.js";
import { bearerOf, type ConsoleAuth } from "./auth.js";
import type { Viewer } from "./layout.js";
import { loginPage } from "./login-page.js";
import { sendPage, sendProblem } from "./respond.js";
import type { SignInThrottle } from "./sign-in-throttle.js";

/** What slowing down wrong tokens needs: the token, the counts, the log and the clock they share. */
export interface WrongTokens {
  readonly auth: ConsoleAuth;
  readonly throttle: SignInThrottle;
  readonly logger: Logger;
  readonly now: () => number;
}

/**
 * An onRequest hook for requests that carry a bearer token, on any page: a held-back address gets 429
 * before its token is compared (a page shows "signed in" for the right one, so every comparison is a
 * guess), and a wrong token is counted and logged. A request without one is not affected.
 */
export function bearerCheck(deps: WrongTokens) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const bearer = bearerOf(request.headers.authorization);
    if (bearer === undefined || !deps.auth.writable) return;
    const waitMs = deps.throttle.waitMs(request.ip);
    if (waitMs > 0) {
      await holdBack(reply, request, deps, waitMs, "bearer");
      return;
    }
    if (await deps.auth.checkToken(bearer)) deps.throttle.succeeded(request.ip);
    else noteWrongToken(request, deps, "a wrong bearer token");
  };
}

/** Counts a wrong token from the request's address and logs it: the address and the counts, never the guess. */
export function noteWrongToken(request: FastifyRequest, deps: WrongTokens, what: string): void {
  const counts = deps.throttle.failed(request.ip);
  const waitMs = deps.throttle.waitMs(request.ip);
  deps.logger.warn(
    { ip: request.ip, failures: counts.client, all: counts.all },
    `web console: ${what}${waitMs > 0 ? `; tokens from ${request.ip} wait ${seconds(waitMs)} s from now` : ""}`,
  );
}

/** 429 with Retry-After, and a page saying how long to wait and until when; nothing about the token. */
export function holdBack(
  reply: FastifyReply,
  request: FastifyRequest,
  deps: WrongTokens,
  waitMs: number,
  form: "sign-in" | "bearer",
): FastifyReply {
  const wait = seconds(waitMs);
  const until = new Date(deps.now() + wait * 1000).toISOString().slice(11, 19);
  const text =
    `Too many wrong console tokens were tried in the last minute (from your address, or from all ` +
    `addresses together): wait ${wait} second${wait === 1 ? "" : "s"} (until ${until} UTC) before trying again.`;
  deps.logger.debug({ ip: request.ip, retryAfter: wait }, "web console: a token held back (429)");
  // Not viewerOf: that would compare the token this answer must not judge.
  const viewer: Viewer = { writable: deps.auth.writable, signedIn: false, csrf: undefined };
  reply.header("retry-after", String(wait));
  return form === "sign-in"
    ? sendPage(reply, "Sign in", viewer, loginPage(text), 429)
    : sendProblem(reply, viewer, 429, "Wait", text);
}

function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}
