import { z } from "zod";
import { LuaScript } from "./lua-script.js";
import { LedgerNames } from "./names.js";
import { BatchStore, type BatchMeta } from "./batch-store.js";
import { lapsedAt, PASS_LEASE_MS } from "./pass-lease.js";
import { passOutcomes, sendingOver } from "./pass-figures.js";
import type { RedisClient } from "./redis-client.js";
import { readSendSeries } from "./send-series.js";
import { ROW_STATUSES } from "./statuses.js";

const writeScript = new LuaScript("pass-write");
const lapseScript = new LuaScript("pass-lapse");

/** A pass: one `run`, or one scan of `start` that took files (or was the schedule's). */
export const PASS_KINDS = ["run", "scan"] as const;
export type PassKind = (typeof PASS_KINDS)[number];

/** The outcomes a pass counts its invoices by: the report's statuses, and `pending` (not final yet). */
export const PASS_OUTCOMES = [...ROW_STATUSES, "pending"] as const;

const count = z.number().int().nonnegative();

/**
 * Files named as left where they are that a pass record keeps: enough to show a night's strays, bounded
 * as the record is (a folder of 100,000 strays is said by the count beyond them).
 */
export const LEFT_KEPT = 50;

/**
 * What is kept of a pass (docs/operations.md, "The night at a glance"): bounded by its files (one batch
 * id each, as every batch keeps its own record anyway); what it sent is read from the fleet's series
 * (src/ledger/send-series.ts) over its start and end.
 */
export const passRecordSchema = z.object({
  id: z.string(),
  kind: z.enum(PASS_KINDS),
  /** Epoch ms. */
  startedAt: count,
  /** Epoch ms; absent while it runs (or when its process was killed before it ended). */
  endedAt: count.optional(),
  /** A `run`'s --deadline (epoch ms), when one was given. */
  deadline: count.optional(),
  /** The batches of the files it took (claimed, resumed, taken again, or waited for). */
  batches: z.array(z.string()),
  /** Their invoices by outcome, as the batches stood when the pass ended. */
  invoices: z.partialRecord(z.enum(PASS_OUTCOMES), count),
  /** Requests the service refused for capacity (429) while it ran, every process together. */
  refused: count.optional(),
  /**
   * The requests answered in its busiest whole second, every process together (the answers per second of
   * src/ledger/send-series.ts): a count measured, never a rate inferred from a shorter span.
   */
  busiestSecond: count.optional(),
  /** The learned rate (requests per second) when it ended. */
  learnedRate: z.number().nonnegative().optional(),
  /** The pass's exit code (README.md, the exit codes of `run`); a scan's is what `run` would have said. */
  exitCode: count.optional(),
  /** The files it saw and left where they are, each named with why (the first LEFT_KEPT). */
  left: z.array(z.object({ where: z.string(), shown: z.string(), why: z.string() })).optional(),
  /** How many more it left beyond those. */
  leftOut: count.optional(),
  /**
   * Its process stopped without recording its end (killed, power lost): found by the lapse of its lease
   * (src/ledger/pass-lease.ts); `endedAt` is its last sign of life ("last heard at") and `exitCode` 1.
   */
  endedWithoutWord: z.literal(true).optional(),
  /**
   * Of a pass ended without a word: when its process was found gone (its lease lapsed, at most
   * PASS_LEASE_MS after `endedAt`). What it sent is read up to then: its end lies between the two.
   */
  goneBy: count.optional(),
});
export type PassRecord = z.infer<typeof passRecordSchema>;

/**
 * The passes' records: a sorted set by start, a hash of records and the set of those not ended. A pass
 * is kept RESULTS_RETENTION from its start: each write removes the passes that started earlier.
 */
export class Passes {
  readonly names: LedgerNames;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    this.names = new LedgerNames(prefix);
  }

  /**
   * Writes the record (a new pass, or one that ended); removes passes older than `retentionMs`. A pass
   * written running with a `leaseHolder` (`<host>:<pid>`, src/ledger/pass-lease.ts) takes or renews its
   * lease (and is running again if it was found lapsed: its process is alive); its end removes it.
   */
  async write(pass: PassRecord, retentionMs: number, now = Date.now(), leaseHolder = ""): Promise<void> {
    const n = this.names;
    await writeScript.run(
      this.redis,
      [n.passes, n.passRecords, n.openPasses, n.passLeases],
      [
        pass.id,
        pass.startedAt,
        JSON.stringify(passRecordSchema.parse(pass)),
        pass.endedAt === undefined ? 1 : 0,
        now - retentionMs,
        leaseHolder,
      ],
    );
  }

  /**
   * Ends the open `run` passes whose lease has lapsed (their process stopped without a word): exit 1, at
   * their last sign of life, with the figures their end would have recorded, read from what Redis holds
   * of them (their batches, the fleet's answers until they were found gone). Every read of the newest
   * passes does it first, so that `status`, `/metrics` and the console never show a dead pass as running.
   */
  async endLapsed(): Promise<void> {
    const n = this.names;
    const open = (await this.open()).filter((p) => p.kind === "run");
    if (open.length === 0) return;
    const [leases, [seconds, micros]] = await Promise.all([
      this.redis.hmget(n.passLeases, ...open.map((p) => p.id)),
      this.redis.time(),
    ]);
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    for (const [i, pass] of open.entries()) {
      const lease = leases[i] ?? null;
      const seen = lapsedAt(lease, now);
      if (lease === null || seen === undefined) continue;
      const goneBy = Math.max(Math.min(now, seen + PASS_LEASE_MS), pass.startedAt);
      const ended: PassRecord = {
        ...pass,
        ...(await this.#figures(pass, goneBy)),
        endedAt: Math.max(seen, pass.startedAt),
        exitCode: 1,
        endedWithoutWord: true,
        goneBy,
      };
      await lapseScript.run(
        this.redis,
        [n.passRecords, n.openPasses, n.passLeases],
        [pass.id, lease, JSON.stringify(passRecordSchema.parse(ended))],
      );
    }
  }

  /** What Redis recorded of a pass up to `until`: its invoices by outcome, what the fleet sent. */
  async #figures(
    pass: PassRecord,
    until: number,
  ): Promise<Pick<PassRecord, "invoices" | "refused" | "busiestSecond" | "learnedRate">> {
    const [metas, points] = await Promise.all([
      new BatchStore(this.redis, this.prefix).getMany(pass.batches),
      readSendSeries(this.redis, this.prefix, pass.startedAt, until),
    ]);
    return {
      invoices: passOutcomes(metas.filter((m): m is BatchMeta => m !== undefined)),
      ...sendingOver(points),
    };
  }

  /** The pass's record; one ended without a word is found so first, as in `newest`. */
  async get(id: string): Promise<PassRecord | undefined> {
    await this.endLapsed();
    return (await this.#records([id]))[0];
  }

  /** The `n` passes started last, newest first; passes ended without a word are found so first. */
  async newest(n: number): Promise<PassRecord[]> {
    if (n <= 0) return [];
    await this.endLapsed();
    return this.#records(await this.redis.zrevrange(this.names.passes, 0, n - 1));
  }

  /**
   * The last pass that ended with an outcome, the last-pass gauges' (docs/operations.md, "Metrics"):
   * a scan that took no file is listed, so that a night with no files shows, but says nothing of how
   * the nights go, so it never hides a failed one.
   */
  async lastOutcome(): Promise<PassRecord | undefined> {
    await this.endLapsed();
    for (let from = 0; ; from += OUTCOME_PAGE) {
      const ids = await this.redis.zrevrange(this.names.passes, from, from + OUTCOME_PAGE - 1);
      const found = (await this.#records(ids)).find((p) => p.endedAt !== undefined && !tookNoFile(p));
      if (found !== undefined || ids.length < OUTCOME_PAGE) return found;
    }
  }

  /** How many passes are kept. */
  async count(): Promise<number> {
    return this.redis.zcard(this.names.passes);
  }

  /** The passes that have not ended. */
  async open(): Promise<PassRecord[]> {
    return this.#records(await this.redis.smembers(this.names.openPasses));
  }

  /** The records of `ids` that are there and read as records, in that order. */
  async #records(ids: readonly string[]): Promise<PassRecord[]> {
    if (ids.length === 0) return [];
    const raw = await this.redis.hmget(this.names.passRecords, ...ids);
    const out: PassRecord[] = [];
    for (const text of raw) {
      if (text === null) continue;
      const parsed = passRecordSchema.safeParse(parseJson(text));
      if (parsed.success) out.push(parsed.data);
    }
    return out;
  }
}

/** Passes read at a time looking for the last outcome: a night's few, most often the first page. */
const OUTCOME_PAGE = 20;

/** Until when a pass's answers per second are its own (its chart): its end, or when it was found gone. */
export function passSeriesEnd(pass: PassRecord): number | undefined {
  return pass.goneBy ?? pass.endedAt;
}

/** A scan of `start` that took no file. */
export function tookNoFile(pass: PassRecord): boolean {
  return pass.kind === "scan" && pass.batches.length === 0;
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
