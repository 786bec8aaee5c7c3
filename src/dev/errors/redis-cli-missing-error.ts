import { RelayError } from "../../errors/relay-error.js";

/** A private Redis Cluster is formed with `redis-cli --cluster create`, and no `redis-cli` was found. */
export class RedisCliMissingError extends RelayError {
  readonly code = "REDIS_CLI_MISSING";

  constructor(readonly searched: readonly string[]) {
    super(
      `No redis-cli to form a private Redis Cluster (looked in ${searched.join(", ")} and on PATH): install it ` +
        "beside redis-server (Debian/Ubuntu: apt-get install redis-tools, which the redis-server package " +
        "brings along; macOS: brew install redis).",
    );
  }
}
