import { z } from "zod";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

const PAGE = 1000;
const groupsReply = z.array(z.array(z.unknown()));
const pendingSummary = z.tuple([z.coerce.number()]).rest(z.unknown());
const idsReply = z.array(z.tuple([z.string()]).rest(z.unknown()));

/** The group's last delivered entry id, from XINFO GROUPS (a flat field/value list per group). */
function lastDeliveredId(groups: readonly (readonly unknown[])[], group: string): string | undefined {
  for (const fields of groups) {
    const value = (name: string) => fields[fields.indexOf(name) + 1];
    if (value("name") === group) {
      const last = value("last-delivered-id");
      return typeof last === "string" ? last : undefined;
    }
  }
  return undefined;
}

/**
 * Deletes the outbox entries the consumer group has delivered and acknowledged but that are still in the
 * stream. An exporter that acknowledged and deleted in two steps could die between them; such an entry is
 * never read again, and `run`, which waits for the outbox to be empty, would wait for it until its
 * deadline. An entry delivered and not acknowledged stays: it is pending, for its reader or a taker-over.
 * Only entries up to the last delivered one are looked at, so an exporter's start costs a short range.
 * Returns how many were deleted.
 */
export async function dropAcknowledgedEntries(
  redis: RedisClient,
  prefix: string,
  group: string,
): Promise<number> {
  const stream = new LedgerNames(prefix).outbox;
  const last = lastDeliveredId(groupsReply.parse(await redis.xinfo("GROUPS", stream)), group);
  if (last === undefined || last === "0-0") return 0;
  // read after the group's position: whatever it had delivered is pending here or already deleted
  const [count] = pendingSummary.parse(await redis.xpending(stream, group));
  const pending = new Set(
    count === 0
      ? []
      : idsReply.parse(await redis.xpending(stream, group, "-", last, count)).map(([id]) => id),
  );
  let dropped = 0;
  let from = "-";
  for (;;) {
    const page = idsReply.parse(await redis.xrange(stream, from, last, "COUNT", PAGE)).map(([id]) => id);
    const gone = page.filter((id) => !pending.has(id));
    if (gone.length > 0) dropped += await redis.xdel(stream, ...gone);
    const end = page.at(-1);
    if (page.length < PAGE || end === undefined) return dropped;
    from = `(${end}`;
  }
}
