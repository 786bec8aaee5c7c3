import { parseAuthority, type Authority } from "../config/allowed-hosts.js";
import type { HttpAddr } from "../config/http-addr.js";
import { isLoopbackHost } from "../config/loopback.js";

/**
 * A name the server answers to. `port`: the one it must come with; `served`, the port the request came in
 * on (HTTP_ADDR's, or the one taken for port 0); undefined, any.
 */
export interface HostRule {
  readonly name: string;
  readonly port: number | "served" | undefined;
}

/** The host names the HTTP server is served as (docs/security.md; docs/operations.md, "Web console"). */
export interface HostPolicy {
  readonly rules: readonly HostRule[];
  /** HTTP_ADDR reaches beyond this machine (every address, or one of another interface). */
  readonly beyondLoopback: boolean;
  /** HTTP_ADDR's port: the port served for a request whose socket does not say (an injected one). */
  readonly port: number;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];
const WILDCARDS = new Set(["0.0.0.0", "::", "0:0:0:0:0:0:0:0"]);

/**
 * The names a page of this server can be addressed by: HTTP_ADDR's host (not a wildcard: no one browses
 * to 0.0.0.0) and, when it listens on loopback or on every address, the loopback names, each on the port
 * served; CONSOLE_URL's host with its port if written; the CONSOLE_ALLOWED_HOSTS entries. Pure.
 */
export function servedHosts(input: {
  readonly addr: HttpAddr;
  readonly consoleUrl: string | undefined;
  readonly allowed: readonly Authority[] | undefined;
}): HostPolicy {
  const host = input.addr.host.toLowerCase();
  const wildcard = WILDCARDS.has(host);
  const rules: HostRule[] = [];
  if (!wildcard) rules.push({ name: host.replace(/\.$/, ""), port: "served" });
  if (wildcard || isLoopbackHost(host))
    for (const name of LOOPBACK_NAMES)
      if (!rules.some((rule) => rule.name === name)) rules.push({ name, port: "served" });
  if (input.consoleUrl !== undefined) {
    const url = new URL(input.consoleUrl);
    const named = parseAuthority(url.host);
    if (named !== undefined) rules.push(named);
  }
  rules.push(...(input.allowed ?? []));
  return { rules, beyondLoopback: !isLoopbackHost(host), port: input.addr.port };
}

/** The served names as a person writes them (`localhost:9464`, `[::1]:9464`, `relay.lan`), for the log. Pure. */
export function describeHosts(policy: HostPolicy, port: number): string[] {
  return policy.rules.map((rule) => {
    const name = rule.name.includes(":") ? `[${rule.name}]` : rule.name;
    const at = rule.port === "served" ? port : rule.port;
    return at === undefined ? name : `${name}:${at}`;
  });
}

/** The port a request came in on: its socket's, else HTTP_ADDR's. */
export function servedPort(policy: HostPolicy, socket: { readonly localPort?: number | undefined }): number {
  return socket.localPort ?? policy.port;
}

/**
 * Whether a request is addressed to a served name: its Host header, and the target's authority when the
 * request line is in absolute form (`GET http://name/…`, which HTTP lets win over Host). No Host, or one
 * that is not a plain `host[:port]`, is not. A Host without a port means 80: this server speaks plain HTTP.
 */
export function hostAllowed(
  policy: HostPolicy,
  request: { readonly url: string; readonly host: string | undefined },
  servedPort: number,
): boolean {
  if (request.host === undefined) return false;
  const named = parseAuthority(request.host);
  if (named === undefined || !allows(policy, named.name, named.port ?? 80, servedPort)) return false;
  if (request.url.startsWith("/")) return true;
  const target = absolute(request.url);
  return target !== undefined && allows(policy, target.name, target.port, servedPort);
}

/** Whether a form's Origin (or Referer) is a page of a served name, on its scheme's port when none is written. */
export function originAllowed(policy: HostPolicy, origin: string, servedPort: number): boolean {
  const from = absolute(origin);
  return from !== undefined && allows(policy, from.name, from.port, servedPort);
}

function absolute(text: string): { name: string; port: number } | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const named = parseAuthority(url.host);
  if (named === undefined || url.username !== "" || url.password !== "") return undefined;
  return { name: named.name, port: named.port ?? (url.protocol === "https:" ? 443 : 80) };
}

function allows(policy: HostPolicy, name: string, port: number, servedPort: number): boolean {
  return policy.rules.some(
    (rule) =>
      rule.name === name &&
      (rule.port === undefined || (rule.port === "served" ? servedPort : rule.port) === port),
  );
}
