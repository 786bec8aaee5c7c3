import { RelayError } from "../../errors/relay-error.js";

/** A signal asked ingest to stop; it stopped between two chunks, and the file stays claimed. */
export class IngestInterruptedError extends RelayError {
  readonly code = "INGEST_INTERRUPTED";

  constructor(readonly file: string) {
    super(
      `interrupted while ingesting ${file}: it stays in processing/ and the next \`invoice-relay run\` ` +
        "resumes it under the same batch (rows already registered are not counted or enqueued twice)",
    );
  }
}
