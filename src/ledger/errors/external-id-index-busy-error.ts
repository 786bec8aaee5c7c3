import { RelayError } from "../../errors/relay-error.js";

/** The external-id index kept changing under a registration or a retry, more times than it retries: run the command again. */
export class ExternalIdIndexBusyError extends RelayError {
  readonly code = "EXTERNAL_ID_INDEX_BUSY";
}
