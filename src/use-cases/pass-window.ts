import type { WindowSettings } from "../ingest/ingest-window.js";
import { readApiKeyRefusal } from "../queue/api-key-refusal.js";
import type { RedisClient } from "../ledger/redis-client.js";

/**
 * The window of a pass that ingests and sends in one process (`run`): besides the pass's signal (its
 * deadline or a signal to stop), a wait for room ends once the service has refused the API key
 * (recorded in Redis by any process of the fleet), after which no worker takes an invoice and the room
 * would never come. Redis is asked only while ingest waits, one GET a look. Undefined without a window
 * (INGEST_WINDOW=0).
 */
export function passWindow(
  window: WindowSettings | undefined,
  deps: { readonly redis: RedisClient; readonly prefix: string },
  until: AbortSignal,
): WindowSettings | undefined {
  if (window === undefined) return undefined;
  return {
    ...window,
    until: AbortSignal.any([until, ...(window.until ? [window.until] : [])]),
    held: async () => (await readApiKeyRefusal(deps.redis, deps.prefix)) !== undefined,
  };
}
