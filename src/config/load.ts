import { checkCredential } from "./credentials.js";
import { isLoopbackHost } from "./loopback.js";
import { maskUrlCredentials } from "./url-credentials.js";
import { readSecretFileSync } from "./secret-file.js";
import { ConfigError } from "./errors/config-error.js";
import { settingProblem } from "./setting-messages.js";
import { SETTINGS, type SettingName } from "./settings.js";
import type { z } from "zod";

type Values = { -readonly [K in SettingName]: z.output<(typeof SETTINGS)[K]["schema"]> };

/** The settings given as files (`X_FILE`), by name: the path each was read from. */
export type SecretFiles = Readonly<Partial<Record<SettingName, string>>>;

/** Loaded configuration; settings without a default may be absent until a command requires them. */
export type Config = Omit<Values, "invoiceApiUrl" | "invoiceApiKey"> & {
  readonly invoiceApiUrl: string | undefined;
  readonly invoiceApiKey: string | undefined;
  /** Where the settings given as files were read from: a rotated secret is read there again. */
  readonly secretFiles: SecretFiles;
};

/** What submitting needs on top: the service's URL and key. */
export type SubmitConfig = Config & { readonly invoiceApiUrl: string; readonly invoiceApiKey: string };

export type Overrides = Partial<Record<SettingName, string | undefined>>;

interface SettingShape {
  readonly env: string;
  readonly schema: z.ZodType;
  readonly default?: string;
  readonly secret?: boolean;
  readonly file?: boolean;
  readonly description: string;
}

/**
 * Reads every setting from the environment (or, for a secret, the file `X_FILE` names), flags
 * overriding, and validates them all at once: the error lists each bad setting on its own line with
 * what to do.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv,
  overrides: Overrides = {},
  required: readonly SettingName[] = [],
): Config {
  const problems: string[] = [];
  const values: Partial<Record<SettingName, unknown>> = {};
  const secretFiles: Partial<Record<SettingName, string>> = {};
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const setting: SettingShape = SETTINGS[name];
    const fileVariable = `${setting.env}_FILE`;
    const path = setting.file === true ? nonEmpty(env[fileVariable]) : undefined;
    const inline = nonEmpty(env[setting.env]);
    if (path !== undefined && inline !== undefined) {
      problems.push(
        `${setting.env} and ${fileVariable} are both set: set only one (${fileVariable} for a mounted secret file)`,
      );
      continue;
    }
    let raw = overrides[name] ?? inline;
    if (raw === undefined && path !== undefined) {
      const read = readSecretFileSync(path, fileVariable);
      if (!read.ok) {
        problems.push(`${fileVariable} ${path} ${read.problem}`);
        continue;
      }
      raw = read.value;
      secretFiles[name] = path;
    }
    raw ??= setting.default;
    if (raw === undefined) {
      if (required.includes(name))
        problems.push(
          `${setting.env} is not set: ${setting.description}` +
            (setting.file === true ? ` (or set ${fileVariable} to a file holding it)` : ""),
        );
      continue;
    }
    const checked = checkSetting(name, raw, secretFiles[name]);
    if (checked.ok) values[name] = checked.value;
    else problems.push(checked.problem);
  }
  const config = { ...values, secretFiles } as Config;
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

type Checked =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string };

/**
 * One setting's value through its checks: its schema, and for the API key the credential checks
 * (src/config/credentials.ts). `path` is the file it was read from, if any: the message names it. A
 * secret's value is never quoted; a URL's is, its credentials masked.
 */
export function checkSetting(name: SettingName, raw: string, path?: string): Checked {
  const setting: SettingShape = SETTINGS[name];
  const source = path === undefined ? setting.env : `${setting.env}_FILE ${path}: the value`;
  const parsed = setting.schema.safeParse(raw, { error: settingProblem });
  if (!parsed.success) {
    // A URL or a cluster node list may carry a credential: quote the value with it masked.
    const quoted = maskUrlCredentials(raw);
    const shown =
      setting.secret === true ? "" : ` (got "${quoted.length > 80 ? `${quoted.slice(0, 80)}…` : quoted}")`;
    return { ok: false, problem: `${source} ${parsed.error.issues[0]?.message ?? "is invalid"}${shown}` };
  }
  if (name === "invoiceApiKey" && typeof parsed.data === "string") {
    const credential = checkCredential(parsed.data, "invoice-api-key", source);
    if (!credential.ok) return { ok: false, problem: credential.error.message };
  }
  return { ok: true, value: parsed.data };
}

/** Narrows a configuration to one that can submit, or says what is missing. */
export function requireSubmitConfig(config: Config): SubmitConfig {
  const problems: string[] = [];
  if (config.invoiceApiUrl === undefined)
    problems.push(`INVOICE_API_URL is not set: ${SETTINGS.invoiceApiUrl.description}`);
  if (config.invoiceApiKey === undefined)
    problems.push(
      `INVOICE_API_KEY is not set: ${SETTINGS.invoiceApiKey.description} (or set INVOICE_API_KEY_FILE to a file holding it)`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  return config as SubmitConfig;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
