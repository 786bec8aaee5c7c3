import { isBatchId } from "../ledger/batch-id.js";
import type { BatchMeta, BatchStore } from "../ledger/batch-store.js";
import { MalformedBatchIdError } from "./errors/malformed-batch-id-error.js";
import { UnknownBatchError } from "./errors/unknown-batch-error.js";
import { FlagError } from "./errors/flag-error.js";

/**
 * The `--batch ID` flag of the operator commands: absent, or an id of the shape the relay mints
 * (src/ledger/batch-id.ts). Checked before the command opens Redis, so no other ledger name is reached.
 */
export function batchOption(options: Record<string, unknown>): string | undefined {
  const value = options["batch"];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "")
    throw new FlagError("--batch needs a batch id; `invoice-relay status` lists them");
  const id = value.trim();
  if (!isBatchId(id)) throw new MalformedBatchIdError(id);
  return id;
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
