import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger } from "pino";

/** Field paths that may carry a credential; pino replaces their values before anything is written. */
const REDACTED_PATHS = [
  "apiKey",
  "api_key",
  "authorization",
  "Authorization",
  "token",
  "secret",
  "*.apiKey",
  "*.api_key",
  "*.authorization",
  "*.Authorization",
  "*.token",
  "*.secret",
  "headers.authorization",
  "headers.Authorization",
  "*.headers.authorization",
  "*.headers.Authorization",
];

export interface LoggerOptions {
  readonly level?: string;
  /** Literal secret values to mask wherever they appear in a log line (e.g. inside an error message). */
  readonly secrets?: readonly string[];
  readonly destination?: DestinationStream;
  readonly name?: string;
}

/**
 * The one logger of a process: JSON lines to stderr (stdout is kept for command output), credentials
 * redacted by path and, as a second guard, by value.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = (options.secrets ?? []).filter((s) => s.length >= 4);
  const destination = options.destination ?? pino.destination({ fd: 2, sync: false });
  const guarded: DestinationStream =
    secrets.length === 0
      ? destination
      : {
          write: (line: string) => {
            destination.write(maskSecrets(line, secrets));
          },
        };
  return pino(
    {
      level: options.level ?? "info",
      name: options.name ?? "invoice-relay",
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    guarded,
  );
}

/** Replaces every occurrence of each secret in `text`. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets)
    if (secret.length > 0 && out.includes(secret)) out = out.split(secret).join("[redacted]");
  return out;
}

/** A logger that writes nothing, for tests and library callers that pass none. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
