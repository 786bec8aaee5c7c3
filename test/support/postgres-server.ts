// The private PostgreSQL server lives in src/dev/ (benchmarks use it too); tests import it from here.
export { findPostgresBin, PostgresServer } from "../../src/dev/postgres-server.js";
