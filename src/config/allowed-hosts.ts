import { isIP } from "node:net";
import { z } from "zod";

/** A host name or address as a Host header or CONSOLE_ALLOWED_HOSTS writes it, with its port if one is written. */
export interface Authority {
  /** Lower case, without IPv6 brackets or a trailing dot. */
  readonly name: string;
  readonly port: number | undefined;
}

const NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

/**
 * Parses `host`, `host:port` or `[ipv6]:port` (a Host header's form); undefined for anything else: a
 * scheme, a path, user info, a wildcard, an empty or out-of-range port. Pure.
 */
export function parseAuthority(text: string): Authority | undefined {
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(text);
  const plain = /^([^:[\]]+)(?::(\d{1,5}))?$/.exec(text);
  const [, host, portText] = bracketed ?? plain ?? [];
  if (host === undefined) return undefined;
  const name = host.toLowerCase().replace(/\.$/, "");
  if (bracketed !== null ? isIP(name) !== 6 : !NAME.test(name)) return undefined;
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (port < 1 || port > 65_535)) return undefined;
  return { name, port };
}

/** CONSOLE_ALLOWED_HOSTS: comma-separated `host[:port]`. */
export const allowedHostsSchema = z.string().transform((text, ctx): Authority[] => {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const parsed = entries.map(parseAuthority);
  const bad = entries.filter((_entry, i) => parsed[i] === undefined);
  if (entries.length === 0 || bad.length > 0) {
    ctx.addIssue({
      code: "custom",
      message:
        "must be a comma-separated list of host or host:port (e.g. relay.example.com,relay.lan:8443; no " +
        `scheme, path or wildcard)${bad.length > 0 ? `: ${bad.map((b) => JSON.stringify(b)).join(", ")} is not one` : ""}`,
    });
    return z.NEVER;
  }
  return parsed.filter((entry): entry is Authority => entry !== undefined);
});
