import { RelayError } from "../../errors/relay-error.js";

/**
 * The request was not sent: submitting is held back for a while (an outage cool-down, a refused key)
 * or the worker is stopping.
 * Nothing reached the service, so the invoice goes back to the queue without spending an attempt.
 */
export class RequestHeldBackError extends RelayError {
  readonly code = "REQUEST_HELD_BACK";

  constructor(why = "outage cool-down or refused API key") {
    super(`not sent: submitting is held back (${why}); the invoice waits`);
  }
}
