import { createHash, createHmac } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { HostKeyPin } from "./remote-source.js";

/** A host key's fingerprint as `ssh-keygen -lf` prints it: `SHA256:` and unpadded base64. */
export function fingerprintOf(key: Buffer): string {
  return `SHA256:${createHash("sha256").update(key).digest("base64").replace(/=+$/, "")}`;
}

/** The fingerprints a pin accepts for `host:port`, and how to name them in a refusal. */
export interface AcceptedKeys {
  readonly fingerprints: ReadonlySet<string>;
  /** `SHA256:…`, or `no entry for [host]:port in FILE`. */
  readonly expected: string;
}

/**
 * What the pin accepts. A known_hosts file is read as OpenSSH writes it: `host`, `[host]:port` (a port
 * other than 22), comma-separated names and hashed names (`|1|salt|hash`); markers (`@revoked`,
 * `@cert-authority`) and wildcards are not honoured, so such lines accept nothing.
 */
export async function acceptedKeys(pin: HostKeyPin, host: string, port: number): Promise<AcceptedKeys> {
  if (pin.kind === "fingerprint")
    return { fingerprints: new Set([pin.fingerprint]), expected: pin.fingerprint };
  const name = port === 22 ? host : `[${host}]:${port}`;
  const found = new Set<string>();
  for (const line of (await readFile(pin.file, "utf8")).split("\n")) {
    const fields = line.trim().split(/\s+/);
    const [hosts, , key] = fields;
    if (hosts === undefined || key === undefined || hosts.startsWith("#") || hosts.startsWith("@")) continue;
    if (!hosts.split(",").some((h) => namesHost(h, name))) continue;
    found.add(fingerprintOf(Buffer.from(key, "base64")));
  }
  return {
    fingerprints: found,
    expected: found.size === 0 ? `no entry for ${name} in ${pin.file}` : [...found].join(" or "),
  };
}

function namesHost(entry: string, name: string): boolean {
  if (!entry.startsWith("|1|")) return entry === name;
  const [, , salt, hash] = entry.split("|");
  if (salt === undefined || hash === undefined) return false;
  return createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash;
}
