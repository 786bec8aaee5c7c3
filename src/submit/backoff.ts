export interface BackoffPolicy {
  readonly baseMs: number;
  readonly capMs: number;
  readonly retryAfterCapMs: number;
}

/**
 * Delay before retry number `retry` (1 = the first retry): exponential backoff with full jitter
 * (uniform in [0, min(cap, base·2^(retry-1))]), but never sooner than the service's Retry-After,
 * which is itself capped.
 */
export function backoffDelay(
  policy: BackoffPolicy,
  retry: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(retry - 1, 0), 40);
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  const jittered = Math.floor(random() * ceiling);
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, policy.retryAfterCapMs));
}
