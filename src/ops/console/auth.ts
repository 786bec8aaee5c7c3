import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { originAllowed, type HostPolicy } from "../host-policy.js";

/** Where the token is read from while the server runs. */
export interface TokenSource {
  current(): string | undefined;
  refresh(): Promise<string | undefined>;
}

/** The session cookie's name; its value is `<nonce>.<HMAC(token, nonce)>`, never the token. */
export const SESSION_COOKIE = "invoice_relay_console";
/** How long a session lasts: the cookie's Max-Age, and checked here too, so a copied cookie expires. */
export const SESSION_SECONDS = 12 * 3600;

/** How a request proved it may write. */
export type Proof =
  | { readonly kind: "none" }
  | { readonly kind: "bearer" }
  | { readonly kind: "session"; readonly nonce: string };

/**
 * The console's write access, from CONSOLE_TOKEN: a bearer token, or a session cookie derived from it
 * by HMAC, each with a per-session CSRF token. Every comparison is constant-time over equal-length
 * digests, so neither a token's length nor its first wrong character shows in the time taken.
 */
export class ConsoleAuth {
  readonly #source: TokenSource;
  readonly #now: () => number;
  /**
   * Why the deployment refuses writing now, whoever asks (WritesRefusedPort, read at each request):
   * the pages say it and every write action is refused with it.
   */
  refusal: string | undefined;

  /**
   * `token` is CONSOLE_TOKEN, or where it is read again from when it is a file rotated in place
   * (src/config/live-secret.ts): a new token ends the sessions signed with the old one.
   */
  constructor(token: string | undefined | TokenSource, now: () => number = Date.now) {
    this.#source =
      typeof token === "object" ? token : { current: () => token, refresh: () => Promise.resolve(token) };
    this.#now = now;
  }

  get #token(): string | undefined {
    const token = this.#source.current();
    return token === "" ? undefined : token;
  }

  /**
   * Whether `given` is the token, reading a token file again before answering no: the new token of a
   * rotation is taken at once. A wrong token costs a read of the file, and wrong tokens are throttled
   * (sign-in-throttle.ts).
   */
  async checkToken(given: string): Promise<boolean> {
    if (this.tokenMatches(given)) return true;
    await this.#source.refresh();
    return this.tokenMatches(given);
  }

  /** Write actions exist at all. */
  get writable(): boolean {
    return this.#token !== undefined;
  }

  /** Whether `given` is the token. */
  tokenMatches(given: string): boolean {
    if (this.#token === undefined) return false;
    return sameDigest(sha256(given), sha256(this.#token));
  }

  /** A new session's cookie value (after a correct token); its nonce carries when it was issued. */
  newSession(): string {
    const nonce = `${this.#now().toString(36)}-${randomBytes(18).toString("base64url")}`;
    return `${nonce}.${this.#mac(`session:${nonce}`)}`;
  }

  /** The session's nonce if the cookie value is one this token signed less than SESSION_SECONDS ago. */
  sessionOf(cookie: string | undefined): string | undefined {
    if (this.#token === undefined || cookie === undefined) return undefined;
    const dot = cookie.indexOf(".");
    if (dot <= 0) return undefined;
    const nonce = cookie.slice(0, dot);
    const expected = this.#mac(`session:${nonce}`);
    if (!sameDigest(sha256(cookie.slice(dot + 1)), sha256(expected))) return undefined;
    const issuedAt = parseInt(nonce.slice(0, Math.max(0, nonce.indexOf("-"))), 36);
    const age = this.#now() - issuedAt;
    return Number.isFinite(age) && age >= 0 && age < SESSION_SECONDS * 1000 ? nonce : undefined;
  }

  /** The CSRF token of a session: derived, so nothing is stored per session. */
  csrfOf(nonce: string): string {
    return this.#mac(`csrf:${nonce}`);
  }

  csrfMatches(nonce: string, given: string | undefined): boolean {
    if (given === undefined) return false;
    return sameDigest(sha256(given), sha256(this.csrfOf(nonce)));
  }

  /** What the request's Authorization header or cookie proves. */
  proofOf(authorization: string | undefined, cookieHeader: string | undefined): Proof {
    if (this.#token === undefined) return { kind: "none" };
    const bearer = bearerOf(authorization);
    if (bearer !== undefined && this.tokenMatches(bearer)) return { kind: "bearer" };
    const nonce = this.sessionOf(cookieValue(cookieHeader, SESSION_COOKIE));
    return nonce === undefined ? { kind: "none" } : { kind: "session", nonce };
  }

  #mac(text: string): string {
    return createHmac("sha256", this.#token ?? "")
      .update(text)
      .digest("base64url");
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** One cookie's value from a Cookie header. Pure. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The token of an `Authorization: Bearer <token>` header. Pure. */
export function bearerOf(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1]?.trim();
}

/**
 * A form post comes from a page of this console: its Origin (or, without one, its Referer) is one of the
 * host names the server is served as. Not the request's own Host: a page that rebinds its name to this
 * machine sends a Host and an Origin that agree.
 */
export function fromServedPage(
  headers: { origin?: string | undefined; referer?: string | undefined },
  hosts: HostPolicy,
  port: number,
): boolean {
  const from = headers.origin ?? headers.referer;
  return from !== undefined && from !== "null" && originAllowed(hosts, from, port);
}
