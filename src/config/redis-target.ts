import { z } from "zod";
import { maskUrlCredentials, safeUrl } from "./url-credentials.js";

/**
 * Where the deployment's Redis is: one server (REDIS_URL) or the seed nodes of a Redis Cluster
 * (REDIS_CLUSTER_NODES, which wins when set). Pure: parsing, the hash-tag rule of QUEUE_PREFIX and how
 * a target is named in messages, never with its password.
 */

/** One seed node of a Redis Cluster; the client learns the other nodes from it. */
export interface ClusterNode {
  readonly host: string;
  readonly port: number;
}

/** REDIS_CLUSTER_NODES, parsed: the seed nodes, and the credentials and TLS every node is reached with. */
export interface ClusterSeeds {
  readonly nodes: readonly ClusterNode[];
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
}

export type RedisTarget =
  { readonly kind: "single"; readonly url: string } | ({ readonly kind: "cluster" } & ClusterSeeds);

export const EXAMPLE_CLUSTER_NODES = "10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379";

/** The target the settings name: the cluster when REDIS_CLUSTER_NODES is set, else REDIS_URL. */
export function redisTarget(settings: {
  readonly redisUrl: string;
  readonly redisClusterNodes: ClusterSeeds | undefined;
}): RedisTarget {
  return settings.redisClusterNodes === undefined
    ? { kind: "single", url: settings.redisUrl }
    : { kind: "cluster", ...settings.redisClusterNodes };
}

/** The setting an operator fixes when this target is wrong or out of reach. */
export function targetSetting(target: RedisTarget): "REDIS_URL" | "REDIS_CLUSTER_NODES" {
  return target.kind === "single" ? "REDIS_URL" : "REDIS_CLUSTER_NODES";
}

/** The target for messages and logs: a URL without its password, or the seed nodes without credentials. */
export function describeTarget(target: RedisTarget): string {
  if (target.kind === "single") return safeUrl(target.url, "REDIS_URL");
  const nodes = target.nodes.map(nodeAddress).join(",");
  return target.tls ? `${nodes} (TLS)` : nodes;
}

export function nodeAddress(node: ClusterNode): string {
  return node.host.includes(":") ? `[${node.host}]:${node.port}` : `${node.host}:${node.port}`;
}

/**
 * The hash tag of a QUEUE_PREFIX (`invoice-relay` in `{invoice-relay}` or `acme-{invoice-relay}`), or
 * undefined. Redis Cluster hashes only the tag of a key that has one, so every key under a tagged
 * prefix lands in one slot. The QUEUE_PREFIX rule (settings.ts) allows at most one, non-empty.
 */
export function hashTagOf(prefix: string): string | undefined {
  const open = prefix.indexOf("{");
  const close = prefix.indexOf("}", open + 1);
  if (open < 0 || close < 0 || close === open + 1) return undefined;
  return prefix.slice(open + 1, close);
}

const PREFIX_CHARS = "[A-Za-z0-9_.-]";
/** Letters, digits, '_', '.', '-', and at most one `{tag}` with at least one of them inside. */
const QUEUE_PREFIX_PATTERN = new RegExp(`^${PREFIX_CHARS}*(\\{${PREFIX_CHARS}+\\})?${PREFIX_CHARS}*$`);

export const queuePrefixSchema = z
  .string()
  .min(1, "must be 1-64 letters, digits, '_', '.' or '-'")
  .max(64, "must be at most 64 characters")
  .regex(
    /^[A-Za-z0-9_.{}-]*$/,
    "must be letters, digits, '_', '.' or '-', with at most one hash tag in braces (e.g. {invoice-relay})",
  )
  .regex(
    QUEUE_PREFIX_PATTERN,
    "may hold one hash tag only: one '{', then at least one letter, digit, '_', '.' or '-', then one '}' " +
      "(e.g. {invoice-relay} or acme-{relay})",
  );

const NODES_EXAMPLE = `write e.g. ${EXAMPLE_CLUSTER_NODES}, or rediss://:PASSWORD@10.0.0.1:6379,… for TLS and a password`;

/** One entry of REDIS_CLUSTER_NODES; `url` entries carry the scheme and credentials. */
type Entry =
  | { readonly kind: "plain"; readonly node: ClusterNode }
  | {
      readonly kind: "url";
      readonly node: ClusterNode;
      readonly tls: boolean;
      readonly username: string | undefined;
      readonly password: string | undefined;
    };

/** Why an entry is unusable, or the entry. `shown` is the entry as a message may quote it. */
function parseEntry(text: string): Entry | string {
  const shown = `"${maskUrlCredentials(text)}"`;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) {
    if (!/^rediss?:\/\//i.test(text))
      return `entry ${shown} is not a redis:// or rediss:// URL; ${NODES_EXAMPLE}`;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return `entry ${shown} is not a valid URL; ${NODES_EXAMPLE}`;
    }
    const port = portOf(url.port);
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    if (host === "" || port === undefined)
      return `entry ${shown} must name a host and a port, e.g. redis://10.0.0.1:6379`;
    if (url.pathname !== "" && url.pathname !== "/" && url.pathname !== "/0")
      return `entry ${shown} names database ${url.pathname.slice(1)}: a Redis Cluster has only database 0; leave the path out`;
    if (url.search !== "" || url.hash !== "")
      return `entry ${shown} has a query or fragment, which REDIS_CLUSTER_NODES does not take; leave it out`;
    return {
      kind: "url",
      node: { host, port },
      tls: url.protocol.toLowerCase() === "rediss:",
      username: url.username === "" ? undefined : decodeURIComponent(url.username),
      password: url.password === "" ? undefined : decodeURIComponent(url.password),
    };
  }
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9_.-]+)):(\d+)$/.exec(text);
  const port = portOf(match?.[3] ?? "");
  const host = match?.[1] ?? match?.[2];
  if (host === undefined || port === undefined)
    return `entry ${shown} is not host:port or a redis:// URL; ${NODES_EXAMPLE}`;
  return { kind: "plain", node: { host, port } };
}

function portOf(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65_535 ? port : undefined;
}

/** The entries as one set of seeds, or why they do not make one. */
function seedsOf(entries: readonly Entry[]): ClusterSeeds | string {
  const [first] = entries;
  if (first === undefined) return `must list the cluster's nodes, comma-separated; ${NODES_EXAMPLE}`;
  const nodes = entries.map((e) => e.node);
  if (entries.some((e) => e.kind !== first.kind))
    return (
      "mixes host:port entries and redis:// URLs; write every node the same way: all host:port, or all " +
      "URLs with the same scheme, user and password"
    );
  if (first.kind === "plain") return { nodes, username: undefined, password: undefined, tls: false };
  const agree = entries.every(
    (e) =>
      e.kind === "url" &&
      e.tls === first.tls &&
      e.username === first.username &&
      e.password === first.password,
  );
  if (!agree)
    return (
      "entries disagree on the scheme (redis:// or rediss://), user or password: every node of a cluster " +
      "is reached the same way, so give them all the same"
    );
  return { nodes, username: first.username, password: first.password, tls: first.tls };
}

/** REDIS_CLUSTER_NODES: comma-separated `host:port` or `redis[s]://[user:password@]host:port` entries. */
export const clusterNodesSchema = z.string().transform((raw, ctx): ClusterSeeds => {
  const entries: Entry[] = [];
  for (const text of raw.split(",").map((s) => s.trim())) {
    if (text === "") continue;
    const entry = parseEntry(text);
    if (typeof entry === "string") {
      ctx.addIssue({ code: "custom", message: entry });
      return z.NEVER;
    }
    entries.push(entry);
  }
  const seeds = seedsOf(entries);
  if (typeof seeds === "string") {
    ctx.addIssue({ code: "custom", message: seeds });
    return z.NEVER;
  }
  return seeds;
});
