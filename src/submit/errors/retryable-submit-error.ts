import { RelayError } from "../../errors/relay-error.js";

/** An attempt that did not reach a final answer; the job is retried with the same key and body. */
export class RetryableSubmitError extends RelayError {
  readonly code = "SUBMIT_RETRYABLE";

  constructor(
    detail: string,
    readonly httpStatus: number | undefined,
    /** The service's Retry-After, in ms, if it sent one. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(detail);
  }
}
