import type { BatchMeta, BatchStore } from "../ledger/batch-store.js";
import { UnknownBatchError } from "./errors/unknown-batch-error.js";

/** The `--batch ID` flag of the operator commands: absent, or a non-empty id. */
export function batchOption(options: Record<string, unknown>): string | undefined {
  const value = options["batch"];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "")
    throw new Error("--batch needs a batch id; `invoice-relay status` lists them");
  return value.trim();
}

/** The batch's record, or an error that says how to find the right id. */
export async function requireKnownBatch(
  batches: BatchStore,
  id: string,
  queuePrefix: string,
): Promise<BatchMeta> {
  const meta = await batches.get(id);
  if (meta === undefined) throw new UnknownBatchError(id, queuePrefix);
  return meta;
}
