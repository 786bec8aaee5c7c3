import { RelayError } from "../../errors/relay-error.js";

/** One or more settings are missing or invalid; the message has one line per bad setting. */
export class ConfigError extends RelayError {
  readonly code = "CONFIG_INVALID";

  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}
