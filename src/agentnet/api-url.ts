import { isLoopbackHost } from "../config/loopback.js";
import { AgentnetApiUrlError } from "./errors/agentnet-api-url-error.js";
import { InsecureApiUrlError } from "./errors/insecure-api-url-error.js";

export interface ApiUrlOptions {
  /** Accept http:// to a host that is not loopback; the answer carries a developer key. */
  readonly allowInsecureHttp: boolean;
}

/**
 * Validates the base URL of the agent memory network ({base_url} in the spec). A path prefix is kept
 * (paths of the spec are relative to it); credentials, a query or a fragment in the URL are refused, since
 * they would be sent, logged or dropped in ways nobody intended.
 */
export function parseAgentnetApiUrl(raw: string | undefined, options: ApiUrlOptions): URL {
  const text = raw?.trim() ?? "";
  if (text === "") throw new AgentnetApiUrlError("is not set");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new AgentnetApiUrlError(`is not an absolute URL (got "${text.slice(0, 80)}")`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new AgentnetApiUrlError(`must be http(s) (got ${url.protocol})`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new AgentnetApiUrlError("must not hold a user name or password");
  }
  if (url.search !== "" || url.hash !== "") {
    throw new AgentnetApiUrlError(`must not hold a query or fragment (got ${url.origin}${url.pathname}…)`);
  }
  if (url.protocol === "http:" && !options.allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new InsecureApiUrlError(url.origin);
  }
  return url;
}

/** `{base}/api/v1/{path}`, keeping any path prefix of the base URL. */
export function agentnetEndpoint(base: URL, path: string): URL {
  const prefix = base.pathname.replace(/\/+$/, "");
  return new URL(`${base.origin}${prefix}/api/v1/${path.replace(/^\/+/, "")}`);
}
