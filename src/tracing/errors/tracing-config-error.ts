import { RelayError } from "../../errors/relay-error.js";

/** An OTEL_* variable asks for what the relay's tracing does not do; one line per variable, with the fix. */
export class TracingConfigError extends RelayError {
  readonly code = "TRACING_CONFIG_INVALID";

  constructor(readonly problems: readonly string[]) {
    super(`invalid tracing configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}
