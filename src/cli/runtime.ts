import { Command } from "commander";
import {
  loadConfig,
  requireSubmitConfig,
  type Config,
  type Overrides,
  type SubmitConfig,
} from "../config/load.js";
import { SETTINGS, type SettingName } from "../config/settings.js";
import { urlCredentials } from "../config/url-credentials.js";
import { readSecretFileSync } from "../config/secret-file.js";
import { createLogger, type Logger } from "../log/logger.js";
import { webhookSecrets } from "../ops/notify/webhook-url.js";
import { coerceError } from "../errors/relay-error.js";
import { withScope, type Scope } from "../lifecycle/scope.js";
import { CLOSING_BOUND_MS, endProcess, hardStopAfter } from "./hard-stop.js";
import { openWaits } from "../lifecycle/waits.js";
import type { WindowSettings } from "../ingest/ingest-window.js";

/** Loads configuration for a command: environment first, then its flags. */
export function commandConfig(overrides: Overrides, required: readonly SettingName[] = []): Config {
  return loadConfig(process.env, overrides, required);
}

/** INGEST_WINDOW as ingest keeps to it; undefined for 0 (no window). */
export function ingestWindow(
  config: Config,
  more: Omit<WindowSettings, "jobs"> = {},
): WindowSettings | undefined {
  return config.ingestWindow === 0 ? undefined : { ...more, jobs: config.ingestWindow };
}

export function commandLogger(config: Config, name = "invoice-relay"): Logger {
  return createLogger({
    level: config.logLevel,
    format: config.logFormat,
    name,
    secrets: logSecrets(config),
  });
}

/** The secret values a command's logger masks wherever they appear. */
export function logSecrets(config: Config): string[] {
  const cluster = config.redisClusterNodes?.password;
  return [
    ...(config.invoiceApiKey === undefined ? [] : [config.invoiceApiKey]),
    ...(config.consoleToken === undefined ? [] : [config.consoleToken]),
    ...webhookSecrets(config.notifyWebhookUrl),
    ...urlCredentials(config.redisUrl),
    ...urlCredentials(config.resultsDatabaseUrl),
    ...urlCredentials(config.consoleUrl),
    ...(cluster === undefined ? [] : [cluster, encodeURIComponent(cluster)]),
  ];
}

/** Settings whose value is a secret as a whole. */
const WHOLE_SECRETS = [SETTINGS.invoiceApiKey.env, SETTINGS.consoleToken.env];

/**
 * The secrets a process was given, read from its environment, the files `X_FILE` names, and its
 * arguments without validating them (the configuration may be what failed): the last guard on what the
 * CLI prints of an error.
 */
export function processSecrets(env: NodeJS.ProcessEnv, argv: readonly string[]): string[] {
  const given = (setting: { readonly env: string }): string | undefined => {
    const inline = env[setting.env]?.trim();
    if (inline !== undefined && inline !== "") return inline;
    const path = env[`${setting.env}_FILE`]?.trim();
    if (path === undefined || path === "") return undefined;
    const read = readSecretFileSync(path, `${setting.env}_FILE`);
    return read.ok ? read.value : undefined;
  };
  const values = Object.values(SETTINGS).map(given);
  return [
    ...WHOLE_SECRETS.flatMap((name) => given({ env: name }) ?? []),
    ...webhookSecrets(given(SETTINGS.notifyWebhookUrl)),
    ...[...values, ...argv].flatMap((value) => urlCredentials(value)),
  ].filter((s) => s.length >= 4);
}

/** A command's settings (environment, then its flags) and its logger. */
export function commandSettings(
  options: Record<string, unknown>,
  loggerName: string,
): { config: Config; logger: Logger } {
  const config = commandConfig(overridesFrom(options));
  return { config, logger: commandLogger(config, loggerName) };
}

/** A submitting command's settings, which must name the invoice service and its key, and its logger. */
export function submitSettings(
  options: Record<string, unknown>,
  loggerName: string,
): { config: SubmitConfig; logger: Logger } {
  const config = requireSubmitConfig(
    commandConfig(overridesFrom(options), ["invoiceApiUrl", "invoiceApiKey"]),
  );
  return { config, logger: commandLogger(config, loggerName) };
}

/** A command that submits (`run`, `start`, `worker`), with the flags of Redis and of the service. */
export function submittingCommand(name: string): Command {
  return addSubmitOptions(addCommonOptions(new Command(name)));
}

/** Flags shared by the commands that talk to Redis and the service. */
export function addCommonOptions(command: Command): Command {
  return command
    .option("--redis-url <url>", "Redis URL (env REDIS_URL)")
    .option("--queue-prefix <prefix>", "Redis key prefix (env QUEUE_PREFIX)")
    .option("--log-level <level>", "log level (env LOG_LEVEL)");
}

export function addSubmitOptions(command: Command): Command {
  return command
    .option("--api-url <url>", "invoice routing service base URL (env INVOICE_API_URL)")
    .option("--allow-insecure-http", "allow http:// to a non-loopback host (env ALLOW_INSECURE_HTTP)")
    .option("--concurrency <n>", "requests in flight per process (env SUBMIT_CONCURRENCY)")
    .option("--rate <n>", "most requests per second, all workers together (env SUBMIT_RATE_PER_SEC)")
    .option("--max-attempts <n>", "attempts per invoice (env MAX_ATTEMPTS)");
}

const FLAG_SETTINGS: Readonly<Record<string, SettingName>> = {
  redisUrl: "redisUrl",
  queuePrefix: "queuePrefix",
  logLevel: "logLevel",
  apiUrl: "invoiceApiUrl",
  concurrency: "submitConcurrency",
  rate: "submitRatePerSec",
  maxAttempts: "maxAttempts",
  dropDir: "dropDir",
  settleMs: "settleMs",
  sources: "sourcesFile",
};

/** Maps parsed commander options onto setting overrides. */
export function overridesFrom(options: Record<string, unknown>): Overrides {
  const overrides: Overrides = {};
  for (const [flag, setting] of Object.entries(FLAG_SETTINGS)) {
    const value = options[flag];
    if (typeof value === "string") overrides[setting] = value;
  }
  if (options["allowInsecureHttp"] === true) overrides.allowInsecureHttp = "true";
  return overrides;
}

/**
 * The one place that handles SIGTERM and SIGINT: the first aborts the returned signal (stop taking
 * work, finish what is in flight within `graceMs`), a second exits at once, and a process still alive
 * its grace and CLOSING_BOUND_MS after the first exits 1 (src/cli/hard-stop.ts). Every long-running
 * command takes its stop from here; the handlers are removed when its scope closes.
 */
export function shutdownOnSignals(logger: Logger, scope: Scope, graceMs: number): AbortSignal {
  const controller = new AbortController();
  scope.onSignals(["SIGTERM", "SIGINT"], (signal) => {
    if (controller.signal.aborted) {
      logger.warn({ signal }, "second signal: exiting now");
      endProcess(1);
    }
    logger.info({ signal }, "stopping: no new work; finishing requests in flight");
    controller.abort(signal);
    // Armed, never cleared: the process ends by itself before it fires, unless something hangs.
    const bound = graceMs + CLOSING_BOUND_MS;
    hardStopAfter(
      bound,
      `invoice-relay: still not stopped ${Math.round(bound / 1000)} s after ${signal} (its grace and closing)`,
      process.stderr,
      openWaits,
    );
  });
  return controller.signal;
}

/** The scope of a long-running command: a closer that fails is logged, never thrown over the command's own error. */
export function commandScope<T>(logger: Logger, body: (scope: Scope) => Promise<T>): Promise<T> {
  return withScope((error) => {
    logger.warn({ err: coerceError(error) }, "closing: a resource did not close cleanly");
  }, body);
}
