import type { FastifyReply, FastifyRequest } from "fastify";
import { ConsoleAuth } from "./auth.js";
import { html, type SafeHtml } from "./html.js";
import { page, type Viewer } from "./layout.js";

/**
 * Sent with every console answer: no script may run (no inline script, nothing from elsewhere), no
 * content sniffing, no framing, and a Referer only to this origin (the form posts' same-origin check).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

/** Who is asking: whether they may write, and their session's CSRF token. */
export function viewerOf(auth: ConsoleAuth, request: FastifyRequest): Viewer {
  const proof = auth.proofOf(request.headers.authorization, request.headers.cookie);
  return {
    writable: auth.writable,
    refusal: auth.refusal,
    signedIn: proof.kind !== "none",
    csrf: proof.kind === "session" ? auth.csrfOf(proof.nonce) : undefined,
  };
}

/** Sends a whole HTML page. */
export function sendPage(
  reply: FastifyReply,
  title: string,
  viewer: Viewer,
  body: SafeHtml,
  code = 200,
): FastifyReply {
  return reply
    .code(code)
    .header("cache-control", "no-store")
    .type("text/html; charset=utf-8")
    .send(page(title, viewer, body));
}

/** A page that only says what went wrong and what to do. */
export function sendProblem(
  reply: FastifyReply,
  viewer: Viewer,
  code: number,
  title: string,
  text: string,
): FastifyReply {
  return sendPage(reply, title, viewer, html`<p class="notice bad">${text}</p>`, code);
}
