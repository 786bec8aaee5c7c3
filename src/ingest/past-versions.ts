import type { PastRecord, RestoredRecord } from "../ledger/past-record.js";
import type { RowRef } from "../ledger/statuses.js";

/**
 * Which past records to write back into the ledger before a chunk is registered, so that registering
 * decides each row as it would within the retention (docs/submission.md, "Idempotency keys"):
 * - the row's own key succeeded: that record (the row is `duplicate`);
 * - else another version of its external_id succeeded: that one (the row is `conflict`, naming it);
 * - else another version failed: that one (the row is sent, the failed one becomes `superseded`).
 * Among several versions of one kind (only a ledger that lost data leaves more than one), the one
 * answered last is the one in effect. A key already restored for an earlier row is not restored twice.
 */
export function pastVersionsToRestore(
  rows: readonly RowRef[],
  found: readonly PastRecord[],
): RestoredRecord[] {
  const byKey = new Map(found.map((record) => [record.key, record]));
  const byExternalId = new Map<string, PastRecord[]>();
  for (const record of found) {
    const versions = byExternalId.get(record.externalId);
    if (versions === undefined) byExternalId.set(record.externalId, [record]);
    else versions.push(record);
  }
  const restored = new Map<string, RestoredRecord>();
  for (const row of rows) {
    const own = byKey.get(row.key);
    const others = (byExternalId.get(row.externalId) ?? []).filter((r) => r.key !== row.key);
    const chosen =
      own?.status === "succeeded"
        ? own
        : (lastAnswered(others.filter((r) => r.status === "succeeded")) ??
          lastAnswered(others.filter((r) => r.status === "failed")));
    if (chosen !== undefined && !restored.has(chosen.key))
      restored.set(chosen.key, { ...chosen, externalId: row.externalId, line: row.line });
  }
  return [...restored.values()];
}

function lastAnswered(records: readonly PastRecord[]): PastRecord | undefined {
  let last: PastRecord | undefined;
  for (const record of records)
    if (
      last === undefined ||
      (record.lastAttemptAt ?? 0) > (last.lastAttemptAt ?? 0) ||
      ((record.lastAttemptAt ?? 0) === (last.lastAttemptAt ?? 0) && record.key > last.key)
    )
      last = record;
  return last;
}
