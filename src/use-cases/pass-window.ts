import type { WindowSettings } from "../ingest/ingest-window.js";
import { readApiKeyRefusal } from "../queue/api-key-refusal.js";
import type { RedisClient } from "../ledger/redis-client.js";

export interface PassWindow {
  /** The window the pass's ingest keeps to; undefined without one (INGEST_WINDOW=0). */
  readonly window: WindowSettings | undefined;
  close(): void;
}

/**
 * The window of a pass that ingests and sends in one process (`run`): besides a signal, a wait for room
 * ends at the pass's deadline and once the service has refused the API key (recorded in Redis by any
 * process of the fleet), after which no worker takes an invoice and the room would never come. Redis is
 * asked only while ingest waits, one GET a look.
 */
export function passWindow(
  window: WindowSettings | undefined,
  deps: { readonly redis: RedisClient; readonly prefix: string },
  options: { readonly signal: AbortSignal; readonly deadline?: number | undefined },
): PassWindow {
  if (window === undefined) return { window: undefined, close: () => undefined };
  const stop = new AbortController();
  const stopNow = (): void => {
    stop.abort();
  };
  options.signal.addEventListener("abort", stopNow, { once: true });
  const deadline =
    options.deadline === undefined
      ? undefined
      : setTimeout(stopNow, Math.max(0, options.deadline - Date.now())).unref();
  return {
    window: {
      ...window,
      until: AbortSignal.any([stop.signal, ...(window.until ? [window.until] : [])]),
      held: async () => (await readApiKeyRefusal(deps.redis, deps.prefix)) !== undefined,
    },
    close: () => {
      options.signal.removeEventListener("abort", stopNow);
      if (deadline !== undefined) clearTimeout(deadline);
    },
  };
}
