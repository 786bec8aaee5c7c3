import { z } from "zod";
import type { Config } from "../config/load.js";
import { redisTarget, type RedisTarget } from "../config/redis-target.js";

/**
 * What the exporter thread is started with (its `workerData`): plain data, only the settings it needs.
 * The thread parses it again, as every boundary does.
 */
export const exporterThreadSettingsSchema = z.object({
  redis: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("single"), url: z.string() }),
    z.object({
      kind: z.literal("cluster"),
      nodes: z.array(z.object({ host: z.string(), port: z.number().int() })),
      username: z.string().optional(),
      password: z.string().optional(),
      tls: z.boolean(),
    }),
  ]),
  prefix: z.string(),
  /** RESULTS_DATABASE_URL. */
  databaseUrl: z.string(),
  /**
   * LOCK_DURATION_MS: outbox events a dead process had read are taken over after this long, as its jobs
   * are retried after it.
   */
  claimIdleMs: z.number().int().positive(),
  log: z.object({
    level: z.string(),
    format: z.enum(["auto", "json", "pretty"]),
    /**
     * Whether the process' stderr is a terminal (a thread's own stderr never is); Node leaves it
     * undefined rather than false when it is not.
     */
    isTTY: z.boolean().optional(),
    /** The values the process' logger masks. */
    secrets: z.array(z.string()),
  }),
});

export type ExporterThreadSettings = z.infer<typeof exporterThreadSettingsSchema>;

/** The settings of the exporter thread of a process with this configuration. */
export function exporterThreadSettings(
  config: Config,
  databaseUrl: string,
  log: ExporterThreadSettings["log"],
): ExporterThreadSettings {
  const target = redisTarget(config);
  return {
    redis:
      target.kind === "single"
        ? { kind: "single", url: target.url }
        : {
            kind: "cluster",
            nodes: target.nodes.map((n) => ({ host: n.host, port: n.port })),
            ...(target.username === undefined ? {} : { username: target.username }),
            ...(target.password === undefined ? {} : { password: target.password }),
            tls: target.tls,
          },
    prefix: config.queuePrefix,
    databaseUrl,
    claimIdleMs: config.lockDurationMs,
    log,
  };
}

/** The Redis target the thread connects to, as `createRedis` takes it. */
export function threadRedisTarget(settings: ExporterThreadSettings): RedisTarget {
  const redis = settings.redis;
  if (redis.kind === "single") return redis;
  return {
    kind: "cluster",
    nodes: redis.nodes,
    username: redis.username,
    password: redis.password,
    tls: redis.tls,
  };
}

/** Main thread → exporter thread: finish the read in hand, close, and end. */
export const stopMessage = z.object({ type: z.literal("stop") });

/** Exporter thread → main thread, once its database pool is open and it reads the outbox. */
export const startedMessage = z.object({ type: z.literal("started") });

/** Exporter thread → main thread, once it has stopped and closed its connections. */
export const stoppedMessage = z.object({
  type: z.literal("stopped"),
  exported: z.number(),
  refused: z.number(),
});
