import { RelayError } from "../../errors/relay-error.js";

/** exporter-thread.js was started other than as the exporter thread of run, start or worker, or with settings it cannot use. */
export class ExporterThreadError extends RelayError {
  readonly code = "EXPORTER_THREAD_INVALID";
}
