/** When a request was sent (ms since the epoch) and how long until its answer, or until it was given up. */
export interface AttemptTiming {
  readonly startedAt: number;
  readonly durationMs: number;
}

/** What one attempt got back: an HTTP answer, or no answer at all; timed by observeAttempts. */
export type Answer = (
  | {
      readonly kind: "response";
      readonly status: number;
      readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
      /** The body as text, cut at the configured bound. */
      readonly body: string;
    }
  | {
      readonly kind: "no-response";
      /** timeout, connection refused/reset, DNS, TLS…: always safe to retry with the same key. */
      readonly reason: "timeout" | "connection";
      readonly message: string;
    }
) & {
  readonly timing?: AttemptTiming;
  /**
   * Requests of this attempt answered before this one by refusing the key (401/403), each sent once more
   * with another key (src/submit/http-submitter.ts): answers too, counted in the fleet's totals.
   */
  readonly keyRefusedBefore?: number;
};
