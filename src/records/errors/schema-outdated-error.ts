import { RelayError } from "../../errors/relay-error.js";

/** The database's schema lacks migrations this build needs: nothing may write to it until they are applied. */
export class SchemaOutdatedError extends RelayError {
  readonly code = "SCHEMA_OUTDATED";

  constructor(
    readonly where: string,
    readonly pending: readonly string[],
  ) {
    super(
      `the results database at ${where} lacks ${pending.length} migration(s) this version needs ` +
        `(${pending.join(", ")}): run \`invoice-relay db migrate\` with the same RESULTS_DATABASE_URL, then start again.`,
    );
  }
}
