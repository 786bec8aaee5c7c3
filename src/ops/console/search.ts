import type { ResultRecord } from "../../ledger/record.js";
import type { Ledger } from "../../ledger/ledger.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The records `q` names: as an idempotency key (a UUID) and as an external_id, each found at most once. */
export async function lookUp(
  ledger: Pick<Ledger, "keyOfExternalId" | "getMany">,
  q: string,
): Promise<ResultRecord[]> {
  const keys = new Set<string>();
  if (UUID.test(q)) keys.add(q.toLowerCase());
  const carrier = await ledger.keyOfExternalId(q);
  if (carrier !== undefined) keys.add(carrier);
  const records = await ledger.getMany([...keys]);
  return records.filter((r): r is ResultRecord => r !== undefined);
}
