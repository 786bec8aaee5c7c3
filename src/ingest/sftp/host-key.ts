import { createHash, createHmac } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import type { ServerHostKeyAlgorithm } from "ssh2";
import { RemoteSourceUnavailableError } from "./errors/remote-source-unavailable-error.js";
import type { RemoteSource } from "./remote-source.js";

/** A host key's fingerprint as `ssh-keygen -lf` prints it: `SHA256:` and unpadded base64. */
export function fingerprintOf(key: Buffer): string {
  return `SHA256:${createHash("sha256").update(key).digest("base64").replace(/=+$/, "")}`;
}

/** The key type a key blob names first (`ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`…). */
export function keyTypeOf(key: Buffer): string {
  const length = key.length >= 4 ? key.readUInt32BE(0) : 0;
  return key.subarray(4, 4 + length).toString("latin1");
}

/**
 * The host-key algorithms that prove a key of each type, in ssh2's order of preference: an RSA key is
 * proved by `rsa-sha2-512`, `rsa-sha2-256` or the old `ssh-rsa`.
 */
const ALGORITHMS: Readonly<Record<string, readonly ServerHostKeyAlgorithm[]>> = {
  "ssh-ed25519": ["ssh-ed25519"],
  "ecdsa-sha2-nistp256": ["ecdsa-sha2-nistp256"],
  "ecdsa-sha2-nistp384": ["ecdsa-sha2-nistp384"],
  "ecdsa-sha2-nistp521": ["ecdsa-sha2-nistp521"],
  "ssh-rsa": ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
};

/** The host-key algorithms that can prove a key of one of `types`, in ssh2's order of preference. */
export function algorithmsFor(types: Iterable<string>): ServerHostKeyAlgorithm[] {
  const wanted = new Set(types);
  return Object.entries(ALGORITHMS).flatMap(([type, algorithms]) => (wanted.has(type) ? algorithms : []));
}

/** What the pin accepts for the source's `host:port`, and how to name it in a refusal. */
export interface AcceptedKeys {
  readonly fingerprints: ReadonlySet<string>;
  /** `SHA256:…` (or several, `… or …`). */
  readonly expected: string;
  /**
   * The host-key algorithms to offer: those of the pinned keys' types (known_hosts, as OpenSSH orders
   * them), or every one (a fingerprint says no type: the server is asked for each type in turn).
   */
  readonly algorithms: readonly ServerHostKeyAlgorithm[];
  /** Whether a key not pinned is a reason to ask again for another type (a fingerprint pin). */
  readonly probe: boolean;
  /** Keys known_hosts marks `@revoked` for this host, by fingerprint, with the file and line saying so. */
  readonly revoked: ReadonlyMap<string, string>;
}

/**
 * What the pin accepts. A known_hosts file is read as OpenSSH reads it: host patterns (`host`,
 * `[host]:port` for a port other than 22, comma-separated, `*` and `?` wildcards, `!` negation) or
 * hashed names (`|1|salt|hash`); `@revoked` keys are refused even where another line pins them;
 * `@cert-authority` (host certificates) is not supported, which a file trusting the server only so
 * hears. A known_hosts file that cannot be read is a configuration error (RemoteSourceUnavailableError
 * `config`), said at once.
 */
export async function acceptedKeys(source: RemoteSource): Promise<AcceptedKeys> {
  const pin = source.hostKey;
  if (pin.kind === "fingerprint")
    return {
      fingerprints: new Set([pin.fingerprint]),
      expected: pin.fingerprint,
      algorithms: algorithmsFor(Object.keys(ALGORITHMS)),
      probe: true,
      revoked: new Map(),
    };
  const name = source.port === 22 ? source.host : `[${source.host}]:${source.port}`;
  const found = new Set<string>();
  const types = new Set<string>();
  const revoked = new Map<string, string>();
  let authority: string | undefined;
  for (const [i, line] of (await knownHostsText(source, pin.file)).split("\n").entries()) {
    const fields = line.trim().split(/\s+/);
    const marker = fields[0]?.startsWith("@") === true ? fields.shift() : undefined;
    const [hosts, type, key] = fields;
    if (hosts === undefined || type === undefined || key === undefined || hosts.startsWith("#")) continue;
    if (!namesHost(hosts, name)) continue;
    const where = `known_hosts ${pin.file} line ${i + 1}`;
    const fingerprint = fingerprintOf(Buffer.from(key, "base64"));
    if (marker === "@revoked") revoked.set(fingerprint, where);
    else if (marker === "@cert-authority") authority ??= where;
    else if (marker === undefined) {
      found.add(fingerprint);
      types.add(type);
    }
  }
  if (found.size === 0 && authority !== undefined)
    throw new RemoteSourceUnavailableError(
      source.name,
      "config",
      `${authority} trusts a certificate authority (@cert-authority) for ${name}: host certificates are ` +
        `not supported; pin the server's own host key (ssh-keyscan -p ${source.port} ${source.host}, ` +
        "or host_key: SHA256:…)",
    );
  if (found.size === 0)
    throw new RemoteSourceUnavailableError(
      source.name,
      "config",
      `there is no entry for ${name} in ${pin.file}, so no host key of it is trusted; add the server's ` +
        `key there (ssh-keyscan -p ${source.port} ${source.host}, checked with its operator), or pin host_key`,
    );
  return {
    fingerprints: found,
    expected: [...found].join(" or "),
    algorithms: algorithmsFor(types),
    probe: false,
    revoked,
  };
}

async function knownHostsText(source: RemoteSource, file: string): Promise<string> {
  const info = await stat(file).catch(() => undefined);
  // Checked before reading: a FIFO (or a device) would be read for ever.
  if (info !== undefined && !info.isFile() && !info.isDirectory())
    throw new RemoteSourceUnavailableError(
      source.name,
      "config",
      `known_hosts ${file} is not a regular file; name the known_hosts file itself`,
    );
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const folder = (error as NodeJS.ErrnoException).code === "EISDIR";
    throw new RemoteSourceUnavailableError(
      source.name,
      "config",
      folder
        ? `known_hosts ${file} is a folder; name the known_hosts file itself`
        : `known_hosts ${file} cannot be read; check the path and its permissions`,
    );
  }
}

/** Whether a known_hosts host field names `name`: OpenSSH's pattern list, or one hashed name. */
function namesHost(field: string, name: string): boolean {
  if (field.startsWith("|1|")) {
    const [, , salt, hash] = field.split("|");
    if (salt === undefined || hash === undefined) return false;
    return createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash;
  }
  let matched = false;
  for (const pattern of field.split(",")) {
    const negated = pattern.startsWith("!");
    if (!globMatches(negated ? pattern.slice(1) : pattern, name.toLowerCase())) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

function globMatches(pattern: string, text: string): boolean {
  const source = Array.from(pattern.toLowerCase())
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`, "s").test(text);
}
