import { z } from "zod";

/** Where a long-running command's HTTP server (health probes) listens: HTTP_ADDR. */
export interface HttpAddr {
  readonly host: string;
  /** 0: any free port (the one taken is logged). */
  readonly port: number;
}

/** HTTP_ADDR as set: an address, or `off` for no server. */
export type HttpAddrSetting = HttpAddr | "off";

/** `start` serves its probes here unless HTTP_ADDR says otherwise; `worker` and `run` only when it is set. */
export const START_HTTP_ADDR: HttpAddr = { host: "127.0.0.1", port: 9464 };

const HOST = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;
const IPV6 = /^[0-9A-Fa-f:.]+$/;

/** Parses `host:port`, `[ipv6]:port` or `off`; undefined when the text is none of these. */
export function parseHttpAddr(text: string): HttpAddrSetting | undefined {
  const trimmed = text.trim();
  if (trimmed.toLowerCase() === "off") return "off";
  const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(trimmed);
  const plain = /^([^:[\]]+):(\d{1,5})$/.exec(trimmed);
  const [, host, portText] = bracketed ?? plain ?? [];
  if (host === undefined || portText === undefined) return undefined;
  if (!(bracketed === null ? HOST : IPV6).test(host)) return undefined;
  const port = Number(portText);
  if (port > 65_535) return undefined;
  return { host, port };
}

export const httpAddrSchema = z.string().transform((text, ctx): HttpAddrSetting => {
  const parsed = parseHttpAddr(text);
  if (parsed === undefined) {
    ctx.addIssue({
      code: "custom",
      message: "must be host:port (e.g. 127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464, port 0-65535) or off",
    });
    return z.NEVER;
  }
  return parsed;
});

/** The address a command listens on: HTTP_ADDR when set, else the command's own default; undefined for off. */
export function resolveHttpAddr(
  setting: HttpAddrSetting | undefined,
  commandDefault: HttpAddrSetting,
): HttpAddr | undefined {
  const chosen = setting ?? commandDefault;
  return chosen === "off" ? undefined : chosen;
}

/** `host:port` as HTTP_ADDR is written, IPv6 hosts in brackets. */
export function formatHttpAddr(addr: HttpAddr): string {
  return addr.host.includes(":") ? `[${addr.host}]:${addr.port}` : `${addr.host}:${addr.port}`;
}
