import type { Logger } from "../log/logger.js";
import type { TracingHandle } from "./invoice-tracing.js";
import { tracingSettings } from "./tracing-settings.js";

/**
 * Starts tracing when the OTEL_* variables ask for it (src/tracing/tracing-settings.ts); undefined, with
 * nothing of OpenTelemetry loaded, when they do not. Throws TracingConfigError on a variable it cannot
 * honour, before any work is taken.
 */
export async function startTracing(
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly queue: string; readonly logger: Logger },
): Promise<TracingHandle | undefined> {
  const settings = tracingSettings(env);
  if (settings === undefined) return undefined;
  const { openSdk } = await import("./otel-sdk.js");
  return openSdk(settings, { ...options, env });
}
