import { RelayError } from "../../errors/relay-error.js";

/**
 * The exporters' consumer group of the outbox is gone (the stream was deleted, e.g. by `db detach`, or
 * Redis lost it): the consumer creates it again before its next read.
 */
export class OutboxGroupMissingError extends RelayError {
  readonly code = "OUTBOX_GROUP_MISSING";

  constructor(options?: ErrorOptions) {
    super("the outbox's consumer group is missing: it is created again before the next read", options);
  }
}
