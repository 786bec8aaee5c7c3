import { checkCredential } from "./credentials.js";
import { isLoopbackHost } from "./loopback.js";
import { maskUrlCredentials } from "./url-credentials.js";
import { ConfigError } from "./errors/config-error.js";
import { settingProblem } from "./setting-messages.js";
import { SETTINGS, type SettingName } from "./settings.js";
import type { z } from "zod";

type Values = { -readonly [K in SettingName]: z.output<(typeof SETTINGS)[K]["schema"]> };

/** Loaded configuration; settings without a default may be absent until a command requires them. */
export type Config = Omit<Values, "invoiceApiUrl" | "invoiceApiKey"> & {
  readonly invoiceApiUrl: string | undefined;
  readonly invoiceApiKey: string | undefined;
};

/** What submitting needs on top: the service's URL and key. */
export type SubmitConfig = Config & { readonly invoiceApiUrl: string; readonly invoiceApiKey: string };

export type Overrides = Partial<Record<SettingName, string | undefined>>;

/**
 * Reads every setting from the environment, flags overriding, and validates them all at once: the error
 * lists each bad setting on its own line with what to do.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv,
  overrides: Overrides = {},
  required: readonly SettingName[] = [],
): Config {
  const problems: string[] = [];
  const values: Partial<Record<SettingName, unknown>> = {};
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const setting: {
      env: string;
      schema: z.ZodType;
      default?: string;
      secret?: boolean;
      description: string;
    } = SETTINGS[name];
    const raw = overrides[name] ?? nonEmpty(env[setting.env]) ?? setting.default;
    if (raw === undefined) {
      if (required.includes(name)) problems.push(`${setting.env} is not set: ${setting.description}`);
      continue;
    }
    const parsed = setting.schema.safeParse(raw, { error: settingProblem });
    if (parsed.success) values[name] = parsed.data;
    else {
      // A URL or a cluster node list may carry a credential: quote the value with it masked.
      const quoted = maskUrlCredentials(raw);
      const shown =
        setting.secret === true ? "" : ` (got "${quoted.length > 80 ? `${quoted.slice(0, 80)}…` : quoted}")`;
      problems.push(`${setting.env} ${parsed.error.issues[0]?.message ?? "is invalid"}${shown}`);
    }
  }
  const config = values as Config;
  if (typeof config.invoiceApiKey === "string") {
    const checked = checkCredential(config.invoiceApiKey, "invoice-api-key", "INVOICE_API_KEY");
    if (!checked.ok) problems.push(checked.error.message);
  }
  if (typeof config.invoiceApiUrl === "string" && !config.allowInsecureHttp) {
    const url = new URL(config.invoiceApiUrl);
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
      problems.push(
        `INVOICE_API_URL must use https:// for a non-loopback host (got ${url.origin}); ` +
          "use https, or pass --allow-insecure-http / ALLOW_INSECURE_HTTP=true if you accept sending the key in clear",
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Narrows a configuration to one that can submit, or says what is missing. */
export function requireSubmitConfig(config: Config): SubmitConfig {
  const problems: string[] = [];
  if (config.invoiceApiUrl === undefined)
    problems.push(`INVOICE_API_URL is not set: ${SETTINGS.invoiceApiUrl.description}`);
  if (config.invoiceApiKey === undefined)
    problems.push(`INVOICE_API_KEY is not set: ${SETTINGS.invoiceApiKey.description}`);
  if (problems.length > 0) throw new ConfigError(problems);
  return config as SubmitConfig;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
