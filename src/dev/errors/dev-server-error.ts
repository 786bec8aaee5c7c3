import { RelayError } from "../../errors/relay-error.js";

/** A private Redis, Redis Cluster or PostgreSQL for the demo, tests or benchmarks could not be found or started: the message says what to install or where its log is. */
export class DevServerError extends RelayError {
  readonly code = "DEV_SERVER_FAILED";
}
