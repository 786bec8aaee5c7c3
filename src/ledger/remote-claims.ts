import { z } from "zod";
import { fileNameSchema, type FileName } from "../names/file-name.js";
import { BatchLease } from "./batch-lease.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/**
 * - `downloading`: a batch id is given to the remote file; the local copy may be partial or missing;
 * - `downloaded`: the whole file is in processing/ under its claimed name (fsynced, then renamed);
 * - `recognised`: its content was taken before (`earlier`): nothing is ingested, the file is only moved.
 * The claim ends when the file is moved or removed on the server (`finish`).
 */
const claimSchema = z.object({
  batch: z.string(),
  /** The remote file's name, read back as one path segment: its paths here and there are made from it. */
  name: fileNameSchema,
  size: z.number().int().nonnegative(),
  mtimeMs: z.number().nonnegative(),
  step: z.enum(["downloading", "downloaded", "recognised"]),
  sha256: z.string().optional(),
  earlier: z.string().optional(),
});
export type RemoteClaim = z.infer<typeof claimSchema>;

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
});
export type PulledBatch = z.infer<typeof pulledSchema>;

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
 * next one: the claim in progress per remote path, the sizes seen by the last poll, the content taken
 * (by SHA-256), what is left to do on the server per batch, and each source's state for `status`.
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
   * dropped, nothing of them used; their names returned to be said.
   */
  async dropUnreadableClaims(): Promise<string[]> {
    const key = this.#names.remoteClaims(this.source);
    const unreadable = Object.entries(await this.redis.hgetall(key))
      .filter(([, value]) => parsedValue(value, claimSchema) === undefined)
      .map(([field]) => field);
    if (unreadable.length > 0) await this.redis.hdel(key, ...unreadable);
    return unreadable;
  }

  /** Gives the file its batch id, unless a claim of that path exists already (returned then). */
  async begin(path: FileName, claim: RemoteClaim): Promise<RemoteClaim> {
    const key = this.#names.remoteClaims(this.source);
    if ((await this.redis.hsetnx(key, path, JSON.stringify(claim))) === 1) return claim;
    return (await this.claims()).get(path) ?? claim;
  }

  async update(path: FileName, claim: RemoteClaim): Promise<void> {
    await this.redis.hset(
      this.#names.remoteClaims(this.source),
      path,
      JSON.stringify(claimSchema.parse(claim)),
    );
  }

  /** The batch that took this content before, if any. */
  async takenBefore(sha256: string): Promise<string | undefined> {
    return (await this.redis.hget(this.#names.remoteContent(this.source), sha256)) ?? undefined;
  }

  /**
   * The file is moved (or removed) on the server: its claim ends, its content is known from now on, and
   * a downloaded one waits for its report to be archived and uploaded.
   */
  async finish(path: FileName, claim: RemoteClaim, pulled: PulledBatch | undefined): Promise<void> {
    const multi = this.redis
      .multi()
      .hdel(this.#names.remoteClaims(this.source), path)
      .hdel(this.#names.remoteSeen(this.source), path);
    if (claim.sha256 !== undefined && claim.step === "downloaded")
      multi.hset(this.#names.remoteContent(this.source), claim.sha256, claim.batch);
    if (pulled !== undefined)
      multi.hset(this.#names.remoteBatches(this.source), claim.batch, JSON.stringify(pulled));
    await multi.exec();
  }

  /** Drops the claim of a file that went away before it was taken (nothing of it was kept). */
  async abandon(path: FileName): Promise<void> {
    await this.redis.hdel(this.#names.remoteClaims(this.source), path);
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

  async pulled(): Promise<Map<string, PulledBatch>> {
    return parsedHash(await this.redis.hgetall(this.#names.remoteBatches(this.source)), pulledSchema);
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
