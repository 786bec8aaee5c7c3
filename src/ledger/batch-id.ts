import { randomBytes } from "node:crypto";
import { z } from "zod";

/**
 * The one shape of a batch id, as the relay mints it at a claim: the claim time in UTC to the second,
 * then six hex digits (`20261121T020000Z-3fa9c1`). Ids sort by claim time and are unique per drop. The
 * ledger builds Redis names from them, so an id that comes from a person (a `--batch` flag, a console
 * address) is checked against this shape before any name is built.
 */
export const BATCH_ID_PATTERN = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;

/** How messages describe the shape. */
export const BATCH_ID_SHAPE =
  "YYYYMMDDTHHMMSSZ-xxxxxx (claim time in UTC, then six hex digits), e.g. 20261121T020000Z-3fa9c1";

export const batchIdSchema = z
  .string()
  .regex(BATCH_ID_PATTERN, `is not a batch id: a batch id looks like ${BATCH_ID_SHAPE}`);

export function isBatchId(text: string): boolean {
  return BATCH_ID_PATTERN.test(text);
}

/**
 * The ids this process minted within the second of `mintedIn`. Six hex digits are 24 random bits: by
 * the birthday bound, a pass that claims a few thousand files in one second would give two of them the
 * same id about once in ten such seconds, and the second file would be read as the first one changed.
 * Within a process an id is therefore drawn again until it is new.
 */
const minted = new Set<string>();
let mintedIn = "";

/** A new batch id for a claim at `now`, never one this process minted before. */
export function newBatchId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  if (stamp !== mintedIn) {
    minted.clear();
    mintedIn = stamp;
  }
  for (;;) {
    const id = `${stamp}-${randomBytes(3).toString("hex")}`;
    if (!minted.has(id)) {
      minted.add(id);
      return id;
    }
  }
}
