import { isAbsolute, join } from "node:path";

const CREDENTIALS_FILE_NAME = "agentnet-credentials.json";

/**
 * `$XDG_CONFIG_HOME/invoice-relay/agentnet-credentials.json`, else `~/.config/invoice-relay/…`. A relative
 * XDG_CONFIG_HOME is ignored, as the XDG base directory spec asks: it would move with the working folder.
 */
export function defaultCredentialsPath(env: NodeJS.ProcessEnv, homedir: string): string {
  const xdg = env["XDG_CONFIG_HOME"]?.trim();
  const base = xdg !== undefined && xdg !== "" && isAbsolute(xdg) ? xdg : join(homedir, ".config");
  return join(base, "invoice-relay", CREDENTIALS_FILE_NAME);
}
