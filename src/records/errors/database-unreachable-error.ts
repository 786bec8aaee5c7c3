import { RelayError } from "../../errors/relay-error.js";

/** PostgreSQL of the results of record did not let us in: down, unreachable, or refused the login. */
export class DatabaseUnreachableError extends RelayError {
  readonly code = "DATABASE_UNREACHABLE";

  /** `where` is the URL without its password; `reason` has been masked of it too. */
  constructor(where: string, reason: string, options?: ErrorOptions) {
    super(
      `PostgreSQL at ${where} is unreachable or refused the connection (${reason}); is it running, and ` +
        "are RESULTS_DATABASE_URL's host, port, database, user and password right?",
      options,
    );
  }
}
