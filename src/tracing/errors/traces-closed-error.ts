import { RelayError } from "../../errors/relay-error.js";

/**
 * An export after an exiting process stopped waiting for its last spans: refused at once (the exporter
 * does not retry it), so no export keeps the process alive.
 */
export class TracesClosedError extends RelayError {
  readonly code = "TRACES_CLOSED";

  constructor() {
    super("tracing has shut down: spans still unsent are dropped");
  }
}
