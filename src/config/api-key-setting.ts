import type { Config } from "./load.js";

/** Where the API key is set, for a message saying what to fix: the file it is read from, or the variable. */
export function apiKeySetting(config: Pick<Config, "secretFiles">): string {
  const path = config.secretFiles.invoiceApiKey;
  return path === undefined ? "INVOICE_API_KEY" : `the key in INVOICE_API_KEY_FILE (${path})`;
}
