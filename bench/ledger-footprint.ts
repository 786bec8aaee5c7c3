// What the results store and BullMQ's queue hold in Redis, read from INFO, DBSIZE, SCAN and MEMORY USAGE.
import type { Redis } from "ioredis";
import { z } from "zod";

export interface MemoryFigures {
  /** `used_memory`, in bytes. */
  readonly used: number;
  /**
   * The part of it that is db 0's keyspace table (MEMORY STATS `overhead.hashtable.main`): an entry per
   * key and the table's buckets, which Redis resizes on its own schedule.
   */
  readonly keyspaceTable: number;
}

const memoryStats = z.array(z.unknown());

/** MEMORY STATS is a flat list of name, value, …; `db.0` is such a list of its own. */
function statField(stats: readonly unknown[], name: string): unknown {
  const i = stats.indexOf(name);
  return i === -1 ? undefined : stats[i + 1];
}

export async function memoryFigures(redis: Redis): Promise<MemoryFigures> {
  const info = await redis.info("memory");
  const match = /^used_memory:(\d+)/m.exec(info);
  if (match?.[1] === undefined) throw new Error("INFO memory has no used_memory");
  const db = memoryStats.safeParse(statField(memoryStats.parse(await redis.call("MEMORY", "STATS")), "db.0"));
  const table = db.success ? z.number().safeParse(statField(db.data, "overhead.hashtable.main")) : undefined;
  return { used: Number(match[1]), keyspaceTable: table?.success === true ? table.data : 0 };
}

/** Calls per command since the last CONFIG RESETSTAT, from `INFO commandstats` (script-internal calls included). */
export async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info("commandstats");
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls.set(match[1] ?? "", Number(match[2]));
  }
  return calls;
}

export interface Family {
  readonly name: string;
  /** What the family's keys are, for the printed breakdown. */
  readonly holds: string;
  /** Key-name start shared by the family, i.e. its SCAN MATCH pattern without the final `*`. */
  readonly start: string;
  /** The MATCH pattern with `{prefix}` for the QUEUE_PREFIX, for the printed breakdown. */
  readonly pattern: string;
}

const FAMILIES = [
  { name: "r", holds: "record per idempotency key (string: JSON head, answer body)", after: "relay:r:" },
  { name: "external-ids", holds: "external_id -> key (one hash)", after: "relay:external-ids" },
  { name: "batch", holds: "batch hashes, decisions and key lists", after: "relay:batch:" },
  { name: "bullmq", holds: "BullMQ invoice queue (jobs, lists, events)", after: "invoices:" },
] as const;

/**
 * The key families of one QUEUE_PREFIX (see src/ledger/names.ts and docs/ledger.md),
 * then BullMQ's keys of the invoice queue. Order matters: a key counts in the first family it matches.
 */
export function keyFamilies(prefix: string): Family[] {
  return FAMILIES.map((f) => ({
    name: f.name,
    holds: f.holds,
    start: `${prefix}:${f.after}`,
    pattern: `{prefix}:${f.after}*`,
  }));
}

export interface FamilyFootprint {
  readonly family: Family | undefined;
  readonly keys: number;
  readonly sampled: number;
  /** Mean MEMORY USAGE of the sampled keys, in bytes. */
  readonly meanBytes: number;
  /**
   * How much used_memory fell, outside the keyspace table, when the family's keys were deleted; undefined
   * for the keys outside every family, which are kept: with no key left Redis drops db 0 from MEMORY STATS
   * before it frees the table's buckets.
   */
  readonly freedBytes: number | undefined;
  /** Up to 30 key names, for the keys outside every family (a handful, if the families are right). */
  readonly names: readonly string[];
}

const memoryUsage = z.number().int().nullable();

/** MEMORY USAGE with SAMPLES 0: every element of a set or hash counted, not estimated. */
async function meanBytes(redis: Redis, names: readonly string[]): Promise<number> {
  if (names.length === 0) return 0;
  const pipeline = redis.pipeline();
  for (const name of names) pipeline.call("MEMORY", "USAGE", name, "SAMPLES", "0");
  const replies = (await pipeline.exec()) ?? [];
  let sum = 0;
  for (const [error, value] of replies) {
    if (error !== null) throw error;
    sum += memoryUsage.parse(value) ?? 0;
  }
  return sum / names.length;
}

/** Up to `n` names drawn at random without replacement (partial Fisher-Yates). */
function sample(names: string[], n: number): string[] {
  const k = Math.min(n, names.length);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(Math.random() * (names.length - i));
    const picked = names[j] ?? "";
    names[j] = names[i] ?? "";
    names[i] = picked;
  }
  return names.slice(0, k);
}

/**
 * DEL of `names` in chunks; returns how much used_memory fell outside the keyspace table, whose buckets
 * Redis shrinks whenever its cron sees it mostly empty, in whichever family's turn that happens.
 */
async function freedByDeleting(redis: Redis, names: readonly string[]): Promise<number> {
  const before = await memoryFigures(redis);
  for (let i = 0; i < names.length; i += 1000) await redis.del(...names.slice(i, i + 1000));
  const after = await memoryFigures(redis);
  return before.used - before.keyspaceTable - (after.used - after.keyspaceTable);
}

/**
 * Every key of the database by family, by one SCAN per family's MATCH pattern and one over the rest,
 * with MEMORY USAGE of up to `perFamily` random keys of each; then, as a check on the sampling, each
 * family is deleted in turn (with `destroy`) and the fall of used_memory recorded. The last
 * entry is the keys outside every family (`family` undefined).
 */
export async function footprint(
  redis: Redis,
  families: readonly Family[],
  perFamily: number,
  /** Delete each family in turn to see what used_memory it frees (a check on the sampling). */
  destroy: boolean,
): Promise<FamilyFootprint[]> {
  const scan = async (match: string): Promise<string[]> => {
    const names: string[] = [];
    for await (const batch of redis.scanStream({ match, count: 1000 }) as AsyncIterable<string[]>) {
      names.push(...batch);
    }
    return names;
  };
  const found: { family: Family | undefined; names: string[] }[] = [];
  const counted = new Set<string>();
  for (const family of families) {
    const names = (await scan(`${family.start}*`)).filter((n) => !counted.has(n));
    for (const n of names) counted.add(n);
    found.push({ family, names });
  }
  found.push({ family: undefined, names: (await scan("*")).filter((n) => !counted.has(n)) });
  const sampled = [];
  for (const { family, names } of found) {
    const picked = sample([...names], perFamily);
    sampled.push({ family, names, sampled: picked.length, meanBytes: await meanBytes(redis, picked) });
  }
  const out: FamilyFootprint[] = [];
  for (const f of sampled) {
    out.push({
      family: f.family,
      keys: f.names.length,
      sampled: f.sampled,
      meanBytes: f.meanBytes,
      freedBytes: f.family === undefined || !destroy ? undefined : await freedByDeleting(redis, f.names),
      names: f.family === undefined ? f.names.slice(0, 30).sort() : [],
    });
  }
  return out;
}
