import { ConfigError } from "../../src/config/errors/config-error.js";
import { loadConfig } from "../../src/config/load.js";

/** The problems loadConfig reports for `env`, none when it loads. */
export function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
