import { RelayError } from "../../errors/relay-error.js";

/** A private PostgreSQL server is started from `initdb` and `pg_ctl`, and neither was found. */
export class PostgresMissingError extends RelayError {
  readonly code = "POSTGRES_MISSING";

  constructor(readonly searched: readonly string[]) {
    super(
      `No PostgreSQL server binaries (initdb, pg_ctl) on PATH or under ${searched.join(", ")}: install ` +
        "PostgreSQL (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql), or point " +
        "TEST_DATABASE_URL (tests) or RESULTS_DATABASE_URL (benchmarks) at a running one.",
    );
  }
}
