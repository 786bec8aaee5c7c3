import { RelayError } from "../../errors/relay-error.js";

/**
 * The QUEUE_PREFIX holds a ledger in the earlier layout (three Redis keys per invoice), which this version
 * does not read (docs/ledger.md, "Upgrading from the three-key layout"). Writing beside it would lose its records' protection against
 * sending twice, so every command that writes refuses, before anything is claimed.
 */
export class EarlierLayoutError extends RelayError {
  readonly code = "LEDGER_EARLIER_LAYOUT";

  constructor(readonly queuePrefix: string) {
    super(
      `QUEUE_PREFIX=${queuePrefix} holds results written in the earlier ledger layout (three Redis keys per ` +
        "invoice). Finish that work with the version that wrote them first (`invoice-relay run` until status shows nothing queued or " +
        "retrying, and `retry` any failed invoices), then start this version with a new QUEUE_PREFIX, or " +
        `remove the old keys (${queuePrefix}:relay:* and ${queuePrefix}:invoices:*). See docs/ledger.md, ` +
        '"Upgrading from the three-key layout". Nothing was claimed or written.',
    );
  }
}
