import { RelayError } from "../../errors/relay-error.js";

/**
 * The QUEUE_PREFIX holds a ledger written by invoice-relay 0.1, whose layout this version does not read
 * (docs/ledger.md, "Upgrading from 0.1"). Writing beside it would lose its records' protection against
 * sending twice, so every command that writes refuses, before anything is claimed.
 */
export class EarlierLayoutError extends RelayError {
  readonly code = "LEDGER_EARLIER_LAYOUT";

  constructor(readonly queuePrefix: string) {
    super(
      `QUEUE_PREFIX=${queuePrefix} holds results written by invoice-relay 0.1, which keeps them in another ` +
        "layout. Finish that work with 0.1 first (`invoice-relay run` until status shows nothing queued or " +
        "retrying, and `retry` any failed invoices), then start this version with a new QUEUE_PREFIX, or " +
        `remove the old keys (${queuePrefix}:relay:* and ${queuePrefix}:invoices:*). See docs/ledger.md, ` +
        '"Upgrading from 0.1". Nothing was claimed or written.',
    );
  }
}
