import type { RedisClient } from "../ledger/redis-client.js";
import { readApiKeyRefusal } from "../queue/api-key-refusal.js";
import { within } from "./within.js";

/**
 * What /readyz answers: whether this process should be sent work. Each check reads "ok" or what is
 * wrong, in words that never carry a secret (no URL, no key, no error text from Redis).
 */
export interface Readiness {
  readonly ready: boolean;
  /** The names of the checks that are not "ok". */
  readonly failed: readonly CheckName[];
  readonly checks: Readonly<Partial<Record<CheckName, string>>>;
}

export type CheckName = "redis" | "apiKey" | "shutdown" | "dropFolder";

export interface ReadinessDeps {
  /** A connection of the probes' own, so a busy worker connection never delays the answer. */
  readonly redis: RedisClient;
  readonly prefix: string;
  /** Aborted once the process is shutting down (the signal of shutdownOnSignals in src/cli/runtime.ts). */
  readonly stopping: AbortSignal;
  /** How long Redis may take to answer PING, and then to say whether the API key was refused. */
  readonly timeoutMs: number;
  /** For a process that scans the drop folder: "ok", or why the folder cannot be used (its last check). */
  readonly dropFolder?: (() => string) | undefined;
}

/**
 * Runs the readiness checks: Redis answers, the API key is not refused, the process is not stopping,
 * and, for a process that scans it, the drop folder can be used.
 */
export async function checkReadiness(deps: ReadinessDeps): Promise<Readiness> {
  const shutdown = deps.stopping.aborted ? "shutting down" : "ok";
  const redis = await answers(deps.redis, deps.timeoutMs);
  // A refusal pauses the queue for every worker (src/queue/api-key-refusal.ts): no work would be done here.
  const apiKey =
    redis === "ok"
      ? await within(
          readApiKeyRefusal(deps.redis, deps.prefix).then((refusal) =>
            refusal === undefined ? "ok" : "refused",
          ),
          deps.timeoutMs,
        ).then(
          (state) => state ?? "unknown",
          () => "unknown",
        )
      : "unknown";
  const checks: Partial<Record<CheckName, string>> = {
    redis,
    apiKey,
    shutdown,
    ...(deps.dropFolder === undefined ? {} : { dropFolder: deps.dropFolder() }),
  };
  const failed = (Object.keys(checks) as CheckName[]).filter((name) => checks[name] !== "ok");
  return { ready: failed.length === 0, failed, checks };
}

async function answers(redis: RedisClient, timeoutMs: number): Promise<string> {
  // A connection that lost Redis would only queue the PING until it is back; one still making its first
  // connection is given the time to answer.
  if (!["wait", "connecting", "connect", "ready"].includes(redis.status)) return "no answer";
  return within(redis.ping(), timeoutMs).then(
    (reply) => (reply === undefined ? "no answer" : "ok"),
    () => "no answer",
  );
}
