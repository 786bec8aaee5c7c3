import { z } from "zod";
import type { BatchStore } from "./batch-store.js";
import { ledgerNow, nowArgument, type LedgerClock } from "./clock.js";
import { LedgerNames } from "./names.js";
import { Outbox } from "./outbox.js";
import { outboxBacklog, type OutboxBacklog } from "./outbox-backlog.js";
import { LuaScript } from "./lua-script.js";
import type { RedisClient } from "./redis-client.js";

const scripts = { expireKeys: new LuaScript("expire-keys"), expireBatch: new LuaScript("expire-batch") };

/** Keys per expire-keys.lua run: one short script, so Redis never pauses long for a sweep. */
const CHUNK = 200;
/** Candidate batches read per round trip. */
const PAGE = 500;

export interface SweepOutcome {
  /** Batches removed, with their records. */
  batches: number;
  records: number;
  /** Batches past their retention kept because their last report counted failed or pending rows. */
  keptForFailed: number;
}

/** Why a batch past its retention (or never given one) is kept. */
export type KeptBecause = "not reported" | "failed rows" | "waiting for export";

/** What `status` shows of the retention: how long, and the oldest batch kept and when it goes. */
export interface OldestKept {
  readonly id: string;
  readonly createdAt: number;
  /**
   * When its retention ends; undefined while it is not reported, kept for failed rows, or past its
   * retention with events from before its report still in the outbox.
   */
  readonly expiresAt: number | undefined;
  readonly why?: KeptBecause;
}

const countsSchema = z.record(z.string(), z.number());

/**
 * Retention: a batch's records are kept `retentionMs` after its report is written, then removed with
 * everything that points at them (external-id index entries, the batch, its decisions and key list).
 * Never removed: anything of a batch not reported (or reopened), a key still in flight, and a batch
 * whose report counted failed rows (retry needs them); see docs/ledger.md, "Retention". Each step re-checks
 * in Redis that the batch may go, so two processes sweeping at once, or a retry meanwhile, are safe.
 */
export class Retention {
  readonly #names: LedgerNames;
  readonly #prefix: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly batches: BatchStore,
    readonly retentionMs: number,
    /** A fixed clock for tests; absent: Redis's own (src/ledger/clock.ts). */
    private readonly clock?: LedgerClock,
  ) {
    this.#names = new LedgerNames(prefix);
    this.#prefix = prefix;
  }

  /** Removes every batch whose retention has passed; safe to call often (it reads little when none has). */
  async sweep(): Promise<SweepOutcome> {
    const outcome: SweepOutcome = { batches: 0, records: 0, keptForFailed: 0 };
    // Redis's clock, the clock of every batch's report time and of the outbox's entry ids.
    const now = await ledgerNow(this.redis, this.clock);
    const exportedUntil = await this.#exportedUntil();
    // Created before now - retention: only those can have been reported that long ago.
    for (let offset = 0; ; offset += PAGE) {
      const ids = await this.redis.zrangebyscore(
        this.#names.batches,
        "-inf",
        now - this.retentionMs,
        "LIMIT",
        offset,
        PAGE,
      );
      for (const id of ids) {
        const state = await this.#state(id, now, exportedUntil);
        if (state === "failed rows") outcome.keptForFailed++;
        if (state !== "expired") continue;
        const removed = await this.#expire(id);
        if (removed === undefined) continue;
        outcome.records += removed;
        outcome.batches++;
        offset--; // the batch left the set: the next page starts one earlier
      }
      if (ids.length < PAGE) return outcome;
    }
  }

  /** The records removed, or undefined when the batch turned out not to be removable (reopened meanwhile). */
  async #expire(id: string): Promise<number | undefined> {
    // The scripts check again on their own reading of Redis's clock.
    const args = [id, nowArgument(this.clock), this.retentionMs];
    const k = this.#names;
    let removed = 0;
    for await (const page of this.batches.keysOf(id)) {
      for (let at = 0; at < page.length; at += CHUNK) {
        const chunk = page.slice(at, at + CHUNK);
        const result = Number(
          await scripts.expireKeys.run(
            this.redis,
            [
              k.counts,
              k.externalIds,
              k.pending,
              k.completed,
              k.batches,
              k.batch(id),
              ...chunk.map((key) => k.record(key)),
            ],
            [...args, ...chunk],
          ),
        );
        if (result < 0) return undefined;
        removed += result;
      }
    }
    const gone = await scripts.expireBatch.run(
      this.redis,
      [
        k.pending,
        k.ingesting,
        k.completed,
        k.batches,
        k.batch(id),
        k.decisions(id),
        k.batchKeyList(id),
        k.reopened,
      ],
      args,
    );
    return gone === 1 ? removed : undefined;
  }

  /** The oldest batch kept, and when it goes; undefined when the ledger keeps none. */
  async oldest(): Promise<OldestKept | undefined> {
    const oldest = await this.batches.oldest();
    if (oldest === undefined) return undefined;
    const meta = await this.batches.get(oldest.id);
    const reportedAt = meta?.reported_at;
    if (
      meta === undefined ||
      (meta.state !== "reported" && meta.state !== "rejected") ||
      reportedAt === undefined
    )
      return { id: oldest.id, createdAt: oldest.createdAt, expiresAt: undefined, why: "not reported" };
    if (hasOpenRows(meta.counts))
      return { id: oldest.id, createdAt: oldest.createdAt, expiresAt: undefined, why: "failed rows" };
    const expiresAt = reportedAt + this.retentionMs;
    // Past its retention and still here: the sweep keeps it while its events wait in the outbox.
    if (expiresAt <= (await ledgerNow(this.redis, this.clock))) {
      const backlog = await this.#backlog();
      if (backlog?.oldest !== undefined && reportedAt >= backlog.oldest.at)
        return {
          id: oldest.id,
          createdAt: oldest.createdAt,
          expiresAt: undefined,
          why: "waiting for export",
        };
    }
    return { id: oldest.id, createdAt: oldest.createdAt, expiresAt };
  }

  /** The outbox's backlog while it is on; undefined when it is off (nothing waits for an export then). */
  async #backlog(): Promise<OutboxBacklog | undefined> {
    if (!(await new Outbox(this.redis, this.#prefix).enabled())) return undefined;
    return outboxBacklog(this.redis, this.#prefix);
  }

  /**
   * While the outbox is on, a batch reported at or after its oldest entry may still have events there not
   * exported to PostgreSQL: its records stay until they are. Read once per sweep: the oldest entry only
   * gets newer meanwhile, so this errs on the side of keeping.
   */
  async #exportedUntil(): Promise<number> {
    return (await this.#backlog())?.oldest?.at ?? Number.POSITIVE_INFINITY;
  }

  /** What the sweep may do with the batch now (the scripts check the same again, atomically). */
  async #state(id: string, now: number, exportedUntil: number): Promise<"expired" | "kept" | "failed rows"> {
    const meta = await this.batches.get(id);
    if (meta === undefined) return "kept";
    if (meta.state !== "reported" && meta.state !== "rejected") return "kept";
    if (meta.reported_at === undefined || meta.reported_at + this.retentionMs > now) return "kept";
    if (meta.reported_at >= exportedUntil) return "kept";
    if (hasOpenRows(meta.counts)) return "failed rows";
    return "expired";
  }
}

function hasOpenRows(countsJson: string | undefined): boolean {
  if (countsJson === undefined) return false;
  const counts = countsSchema.safeParse(JSON.parse(countsJson));
  return counts.success && ((counts.data["failed"] ?? 0) > 0 || (counts.data["pending"] ?? 0) > 0);
}
