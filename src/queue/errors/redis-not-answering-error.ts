import { RelayError } from "../../errors/relay-error.js";

/**
 * Redis did not answer the reads of the deployment's state in time, or the connection to it is down:
 * `status` exits 1 with this, the console answers its error page and /metrics gives redis_up 0.
 */
export class RedisNotAnsweringError extends RelayError {
  readonly code = "REDIS_NOT_ANSWERING";

  constructor(readonly timeoutMs: number) {
    super(
      `Redis did not answer the reads of the deployment's state within ${timeoutMs} ms (or the connection to it ` +
        "is down): check that Redis is up and not overloaded (its slow log, its CPU), then ask again.",
    );
  }
}
