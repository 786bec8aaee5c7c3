import { z } from "zod";
import { fileNameSchema, type FileName } from "../names/file-name.js";
import { BATCH_ID_PATTERN, batchIdSchema } from "./batch-id.js";
import { BatchLease } from "./batch-lease.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/**
 * - `downloading`: a batch id is given to the remote file; the local copy may be partial or missing, and
 *   the file may already be in the server's processing/ (moved there before it was checked);
 * - `downloaded`: the whole file is in processing/ under its claimed name (fsynced, then renamed), and
 *   the server's copy was read again and found to hold the same bytes.
 * The claim ends when the file is in the server's processing/ (or removed) and checked (`finish`).
 */
const claimFields = z.object({
  batch: batchIdSchema,
  /** The remote file's name, read back as one path segment: its paths here and there are made from it. */
  name: fileNameSchema,
  /** The size and modification time the file had when it was claimed (or last seen, while settling). */
  size: z.number().int().nonnegative(),
  mtimeMs: z.number().nonnegative(),
  // `recognised` (same content as an earlier batch) was a step before such files became batches.
  step: z.preprocess(
    (step) => (step === "recognised" ? "downloading" : step),
    z.enum(["downloading", "downloaded"]),
  ),
  sha256: z.string().optional(),
  /**
   * Set when the file is taken again from the server's processing/ rather than where it was listed: the
   * batch whose copy there (`<againOf>--<name>`) grew or changed after that batch took it.
   */
  againOf: batchIdSchema.optional(),
  /**
   * Set while the file must settle before it is taken (its server copy changed as it was being taken):
   * since when `size` and `mtimeMs` have been seen unchanged.
   */
  settlingSince: z.number().optional(),
  /** Takes whose second read gave other bytes while the size and time stayed those claimed. */
  rereads: z.number().int().nonnegative().optional(),
});
const claimSchema = z.preprocess(withAgainOf, claimFields);
export type RemoteClaim = z.infer<typeof claimFields>;

/** A claim an older version recorded with the server path it took again (`from`): that path's batch. */
function withAgainOf(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null || !("from" in raw) || typeof raw.from !== "string") return raw;
  const claimed = raw.from.slice(raw.from.lastIndexOf("/") + 1);
  const batch = claimed.split("--", 1)[0] ?? "";
  return { ...raw, from: undefined, againOf: BATCH_ID_PATTERN.test(batch) ? batch : raw.from };
}

/**
 * The field of a claim in the claims hash: the name listed, or (holding a `/`, so never a listed name)
 * the batch whose server copy it takes again.
 */
export function claimKey(claim: Pick<RemoteClaim, "name" | "againOf">): string {
  return claim.againOf === undefined ? claim.name : `again/${claim.againOf}`;
}

/** The batch that took a content (by SHA-256) from the source, under which name, and when. */
const takenSchema = z.object({ batch: batchIdSchema, name: fileNameSchema, at: z.number() });
export type TakenContent = z.infer<typeof takenSchema>;

const seenSchema = z.object({ size: z.number(), mtimeMs: z.number(), at: z.number() });
export type SeenFile = z.infer<typeof seenSchema>;

/** What is left to do on the server for a batch pulled from it. */
const pulledSchema = z.object({
  name: fileNameSchema,
  /** Where the file is on the server now (processing/…); absent once removed (`after_claim: delete`). */
  remote: z.string().optional(),
  archived: z.boolean(),
  /** `pending`: its results are to be uploaded once reported; `off`: the source uploads none. */
  report: z.enum(["pending", "uploaded", "off"]),
  /**
   * The server copy as checked when it was taken (absent for a removed one): its size, SHA-256 and
   * modification time. Before it is archived it is compared again; one that grew or changed is taken
   * again, whole, as a new batch (`takenAgainAs`), as the drop folder does.
   */
  size: z.number().int().nonnegative().optional(),
  sha256: z.string().optional(),
  mtimeMs: z.number().optional(),
  takenAgainAs: batchIdSchema.optional(),
  /** An earlier batch of the source took the same bytes, perhaps under another name. */
  sameAs: z.object({ batch: batchIdSchema, file: fileNameSchema }).optional(),
});
export type PulledBatch = z.infer<typeof pulledSchema>;

/** Content records forgotten per poll at most: one poll never holds Redis long. */
const FORGOTTEN_PER_POLL = 1000;

const sourceStateSchema = z.object({
  lastPollAt: z.number().optional(),
  waiting: z.number().int().nonnegative().default(0),
  claimed: z.number().int().nonnegative().default(0),
  reportsPending: z.number().int().nonnegative().default(0),
  lastError: z.string().optional(),
  lastErrorAt: z.number().optional(),
  failures: z.number().int().nonnegative().default(0),
  nextTryAt: z.number().optional(),
});
export type RemoteSourceState = z.infer<typeof sourceStateSchema>;

/**
 * What invoice-relay has taken from each SFTP source, so that a pass cut at any step is finished by the
 * next one: the claim in progress per remote file, the sizes seen by the last poll, the content taken
 * (by SHA-256, for RESULTS_RETENTION), what is left to do on the server per batch, and each source's
 * state for `status`.
 */
export class RemoteClaims {
  readonly #names: LedgerNames;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    readonly source: string,
  ) {
    this.#names = new LedgerNames(prefix);
  }

  /** One process polls a source at a time; undefined when another holds it. */
  async lease(): Promise<BatchLease | undefined> {
    const lease = new BatchLease(this.redis, this.#names.remoteLease(this.source));
    return (await lease.acquire()) ? lease : undefined;
  }

  async claims(): Promise<Map<string, RemoteClaim>> {
    return parsedHash(await this.redis.hgetall(this.#names.remoteClaims(this.source)), claimSchema);
  }

  /**
   * Claims whose record cannot be read (a name that is not one path segment, left by an older version):
   * dropped, nothing of them used; their fields returned to be said. A claim an older version kept under
   * another field (a server path) is moved to its field now.
   */
  async dropUnreadableClaims(): Promise<string[]> {
    const key = this.#names.remoteClaims(this.source);
    const unreadable: string[] = [];
    for (const [field, value] of Object.entries(await this.redis.hgetall(key))) {
      const claim = parsedValue(value, claimSchema);
      if (claim === undefined) unreadable.push(field);
      else if (claimKey(claim) !== field)
        await this.redis
          .multi()
          .hsetnx(key, claimKey(claim), JSON.stringify(claimSchema.parse(claim)))
          .hdel(key, field)
          .exec();
    }
    if (unreadable.length > 0) await this.redis.hdel(key, ...unreadable);
    return unreadable;
  }

  /** Gives the file its batch id, unless a claim of that name exists already (returned then). */
  async begin(path: FileName, claim: RemoteClaim): Promise<RemoteClaim> {
    const key = this.#names.remoteClaims(this.source);
    if ((await this.redis.hsetnx(key, path, JSON.stringify(claim))) === 1) return claim;
    return (await this.claims()).get(path) ?? claim;
  }

  async update(claim: RemoteClaim): Promise<void> {
    await this.redis.hset(
      this.#names.remoteClaims(this.source),
      claimKey(claim),
      JSON.stringify(claimSchema.parse(claim)),
    );
  }

  /** The batch that took this content before, if the source's record of it is kept yet. */
  async takenBefore(sha256: string): Promise<TakenContent | undefined> {
    const raw = await this.redis.hget(this.#names.remoteContent(this.source), sha256);
    return raw === null ? undefined : parsedValue(raw, takenSchema);
  }

  /**
   * The file is taken, in the server's processing/ (or removed) and checked: its claim ends, its content
   * is known from `at` on (ledger time; the first batch that took it stays the one named), and it waits
   * for its report to be archived and uploaded. `again`: the claim that takes its changed server copy
   * again, in the same step.
   */
  async finish(claim: RemoteClaim, pulled: PulledBatch, at: number, again?: RemoteClaim): Promise<void> {
    const key = claimKey(claim);
    const claimsKey = this.#names.remoteClaims(this.source);
    const multi = this.redis
      .multi()
      .hdel(claimsKey, key)
      .hdel(this.#names.remoteSeen(this.source), key)
      .hset(this.#names.remoteBatches(this.source), claim.batch, JSON.stringify(pulledSchema.parse(pulled)));
    if (again !== undefined)
      multi.hsetnx(claimsKey, claimKey(again), JSON.stringify(claimSchema.parse(again)));
    if (claim.sha256 !== undefined) {
      const taken: TakenContent = { batch: claim.batch, name: claim.name, at };
      multi
        .hsetnx(this.#names.remoteContent(this.source), claim.sha256, JSON.stringify(taken))
        .zadd(this.#names.remoteContentTimes(this.source), "NX", at, claim.sha256);
    }
    await multi.exec();
  }

  /**
   * Forgets the content taken before `cutoff` (ledger time: RESULTS_RETENTION ago), as the ledger forgets
   * its batches; a record from before times were kept (in the hash only) goes too.
   */
  async forgetContentBefore(cutoff: number): Promise<void> {
    const hash = this.#names.remoteContent(this.source);
    const times = this.#names.remoteContentTimes(this.source);
    const old = await this.redis.zrangebyscore(times, "-inf", `(${cutoff}`, "LIMIT", 0, FORGOTTEN_PER_POLL);
    if (old.length > 0)
      await this.redis
        .multi()
        .hdel(hash, ...old)
        .zrem(times, ...old)
        .exec();
    if ((await this.redis.hlen(hash)) <= (await this.redis.zcard(times))) return;
    const timed = new Set(await this.redis.zrange(times, 0, -1));
    const untimed = Object.keys(await this.redis.hgetall(hash)).filter((sha) => !timed.has(sha));
    if (untimed.length > 0) await this.redis.hdel(hash, ...untimed);
  }

  /**
   * The server copy of a pulled batch grew or changed after it was taken: the batch keeps what it took,
   * and the copy is given to a new claim (`claim`, a new batch) that takes it again, whole, once settled.
   */
  async takeAgain(batch: string, pulled: PulledBatch, claim: RemoteClaim): Promise<void> {
    await this.redis
      .multi()
      .hsetnx(
        this.#names.remoteClaims(this.source),
        claimKey(claim),
        JSON.stringify(claimSchema.parse(claim)),
      )
      .hset(this.#names.remoteBatches(this.source), batch, JSON.stringify(pulledSchema.parse(pulled)))
      .exec();
  }

  /** Drops the claim of a file that went away or changed before it was taken (nothing of it was kept). */
  async abandon(claim: RemoteClaim): Promise<void> {
    await this.redis.hdel(this.#names.remoteClaims(this.source), claimKey(claim));
  }

  async seen(): Promise<Map<string, SeenFile>> {
    return parsedHash(await this.redis.hgetall(this.#names.remoteSeen(this.source)), seenSchema);
  }

  /** Replaces what the polls saw with `now` (files gone are forgotten). */
  async saw(now: ReadonlyMap<string, SeenFile>): Promise<void> {
    const key = this.#names.remoteSeen(this.source);
    const multi = this.redis.multi().del(key);
    if (now.size > 0) multi.hset(key, Object.fromEntries([...now].map(([p, s]) => [p, JSON.stringify(s)])));
    await multi.exec();
  }

  /** By batch id; a field that is not a batch id (no path is ever made from it) is left out. */
  async pulled(): Promise<Map<string, PulledBatch>> {
    const pulled = parsedHash(await this.redis.hgetall(this.#names.remoteBatches(this.source)), pulledSchema);
    return new Map([...pulled].filter(([batch]) => BATCH_ID_PATTERN.test(batch)));
  }

  /** Updates a pulled batch; one with nothing left to do on the server is forgotten. */
  async setPulled(batch: string, pulled: PulledBatch): Promise<void> {
    const key = this.#names.remoteBatches(this.source);
    if (pulled.archived && pulled.report !== "pending") await this.redis.hdel(key, batch);
    else await this.redis.hset(key, batch, JSON.stringify(pulled));
  }

  async state(): Promise<RemoteSourceState> {
    return (await readSourceStates(this.redis, this.#names)).get(this.source) ?? sourceStateSchema.parse({});
  }

  async setState(state: RemoteSourceState): Promise<void> {
    await this.redis.hset(
      this.#names.remoteSources,
      this.source,
      JSON.stringify(sourceStateSchema.parse(state)),
    );
  }
}

/** Every SFTP source's state, by name: what `status`, /metrics and the console show. */
export async function remoteSourceStates(
  redis: RedisClient,
  prefix: string,
): Promise<Map<string, RemoteSourceState>> {
  return readSourceStates(redis, new LedgerNames(prefix));
}

async function readSourceStates(
  redis: RedisClient,
  names: LedgerNames,
): Promise<Map<string, RemoteSourceState>> {
  return parsedHash(await redis.hgetall(names.remoteSources), sourceStateSchema);
}

function parsedHash<T>(raw: Record<string, string>, schema: z.ZodType<T>): Map<string, T> {
  const out = new Map<string, T>();
  for (const [field, value] of Object.entries(raw)) {
    const parsed = parsedValue(value, schema);
    if (parsed !== undefined) out.set(field, parsed);
  }
  return out;
}

function parsedValue<T>(value: string, schema: z.ZodType<T>): T | undefined {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}
