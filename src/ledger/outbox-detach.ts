import { OutboxWithoutDatabaseError } from "./errors/outbox-without-database-error.js";
import { LedgerNames } from "./names.js";
import { Outbox } from "./outbox.js";
import { outboxBacklog, type OutboxBacklog } from "./outbox-backlog.js";
import type { RedisClient } from "./redis-client.js";

/** How a command uses the ledger, for the outbox check: it writes, only reads, or is `db detach`. */
export type OutboxUse = "writes" | "reads" | "detaches";

/**
 * The outbox left on by a process that had RESULTS_DATABASE_URL, seen by a command that has none.
 * A command that writes throws OutboxWithoutDatabaseError (its events would never be exported, and
 * retention would stop); one that reads gets the warning to show. Undefined when all is well.
 */
export async function checkOutboxDatabase(
  redis: RedisClient,
  prefix: string,
  options: { readonly hasDatabase: boolean; readonly use: OutboxUse },
): Promise<string | undefined> {
  if (options.hasDatabase || options.use === "detaches") return undefined;
  if (!(await new Outbox(redis, prefix).enabled())) return undefined;
  const backlog = await outboxBacklog(redis, prefix);
  if (options.use === "writes") throw new OutboxWithoutDatabaseError(prefix, backlog.entries);
  return (
    `QUEUE_PREFIX=${prefix} exports its results to PostgreSQL (its outbox is on, ${backlog.entries} ` +
    "event(s) not exported yet) but RESULTS_DATABASE_URL is not set: commands that write refuse to start. " +
    "Set RESULTS_DATABASE_URL again, or run `invoice-relay db detach` to go on with Redis only"
  );
}

/** What `db detach` would drop: whether the outbox is on, and its backlog. */
export async function outboxToDetach(
  redis: RedisClient,
  prefix: string,
): Promise<{ readonly on: boolean; readonly backlog: OutboxBacklog }> {
  const [on, backlog] = await Promise.all([
    new Outbox(redis, prefix).enabled(),
    outboxBacklog(redis, prefix),
  ]);
  return { on, backlog };
}

/**
 * Turns the outbox off and drops the events in it, in one transaction: from then on the scripts write no
 * event, and retention no longer waits for an export. Returns how many events were dropped.
 */
export async function detachOutbox(redis: RedisClient, prefix: string): Promise<number> {
  const names = new LedgerNames(prefix);
  const replies = await redis.multi().xlen(names.outbox).del(names.outboxOn, names.outbox).exec();
  const [error, dropped] = replies?.[0] ?? [null, 0];
  if (error) throw error;
  return Number(dropped);
}
