import { RelayError } from "../../errors/relay-error.js";

/** Redis answered a ledger read or script with something the ledger does not know: a stream id, a decision, a batch it never wrote. */
export class LedgerReplyError extends RelayError {
  readonly code = "LEDGER_REPLY_INVALID";
}
