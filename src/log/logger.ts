import { pino, type Logger, type DestinationStream } from "pino";
import { prettyFactory } from "pino-pretty";
import { learnedSecrets } from "./secret-mask.js";
import { escapedJsonText, escapedText } from "../names/shown-text.js";

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
  // A driver's settings or error may carry a database or Redis credential under its own name.
  "password",
  "sslpassword",
  "sentinelPassword",
  "connectionString",
  "*.password",
  "*.sslpassword",
  "*.sentinelPassword",
  "*.connectionString",
];

/** LOG_FORMAT: `auto` pretty-prints for a person at a terminal and writes JSON lines anywhere else. */
export type LogFormat = "auto" | "json" | "pretty";

export interface LoggerOptions {
  readonly level?: string;
  /** Literal secret values to mask wherever they appear in a log line (e.g. inside an error message). */
  readonly secrets?: readonly string[];
  readonly destination?: DestinationStream;
  readonly name?: string;
  /** Default `auto`. */
  readonly format?: LogFormat;
  /** Whether the destination is a terminal; default: whether stderr is one. Decides `auto`, and colours. */
  readonly isTTY?: boolean;
}

/** The format a logger writes: `auto` is pretty only on a terminal. */
export function resolveLogFormat(format: LogFormat, isTTY: boolean): "json" | "pretty" {
  if (format === "auto") return isTTY ? "pretty" : "json";
  return format;
}

/**
 * The one logger of a process: log lines to stderr (stdout is kept for command output), credentials
 * redacted by path and, as a second guard, by value. The lines are JSON, or pretty-printed in-process
 * and written synchronously (nothing is lost when a process exits right after logging) when the
 * format resolves to pretty; the pretty text is made from the redacted JSON line and masked again.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = maskList(options.secrets ?? []);
  const isTTY = options.isTTY ?? process.stderr.isTTY;
  const pretty = resolveLogFormat(options.format ?? "auto", isTTY) === "pretty";
  const destination = options.destination ?? pino.destination({ fd: 2, sync: pretty });
  // A JSON line keeps every value as it was: the characters a terminal would act on that JSON leaves
  // as they are (bidi controls, C1) are written as escapes, which parse back to the same value.
  const guarded: DestinationStream = pretty
    ? prettyStream(destination, secrets, isTTY)
    : {
        write: (line: string) => {
          destination.write(escapedJsonText(maskSecrets(line, secrets())));
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

/**
 * The values a logger masks: those it was given and those the process learned since (secret-mask.ts),
 * longest first, each also as a JSON line writes it (`\` and `"` escaped). Built again only when the
 * process learns one.
 */
function maskList(given: readonly string[]): () => readonly string[] {
  let built = { version: -1, list: [] as readonly string[] };
  return () => {
    const learned = learnedSecrets();
    if (learned.version !== built.version) {
      const all = [...given, ...learned.values];
      const list = [...new Set(all.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))]
        .filter((s) => s.length >= 4)
        .sort((a, b) => b.length - a.length);
      built = { version: learned.version, list };
    }
    return built.list;
  };
}

/**
 * Turns each masked JSON line into one human-readable entry: time, level, name, message, then fields.
 * Text from outside (a file name) never shapes it: line breaks and controls in the message and in an
 * error's stack head, and bidi controls anywhere, are shown as escapes.
 */
function prettyStream(
  destination: DestinationStream,
  secrets: () => readonly string[],
  colorize: boolean,
): DestinationStream {
  const prettify = prettyFactory({
    colorize,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
    singleLine: false,
  });
  return {
    write: (line: string) => {
      const list = secrets();
      const text = prettify(escapedEntry(maskSecrets(line, list)));
      destination.write(escapedJsonText(maskSecrets(text, list)));
    },
  };
}

/** The entry with its message, and the head of each error's stack (its message), escaped. */
function escapedEntry(line: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (entry === null || typeof entry !== "object") return line;
  const record = entry as Record<string, unknown>;
  if (typeof record["msg"] === "string") record["msg"] = escapedText(record["msg"]);
  for (const value of Object.values(record)) {
    if (value === null || typeof value !== "object") continue;
    const err = value as Record<string, unknown>;
    const { message, stack } = err;
    if (typeof message === "string" && typeof stack === "string" && stack.includes(message))
      err["stack"] = stack.replace(message, () => escapedText(message));
  }
  return JSON.stringify(record);
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
