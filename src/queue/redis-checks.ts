import type { Redis } from "ioredis";

/**
 * What to warn an operator about in the Redis that holds the queue: evicting keys would lose jobs and
 * results; no persistence loses everything in flight when Redis restarts.
 */
export async function redisWarnings(redis: Redis): Promise<string[]> {
  const warnings: string[] = [];
  const memory = parseInfo(await redis.info("memory"));
  const policy = memory.get("maxmemory_policy");
  if (policy !== undefined && policy !== "noeviction") {
    warnings.push(
      `Redis maxmemory-policy is "${policy}": Redis may evict jobs and results; set it to noeviction`,
    );
  }
  const persistence = parseInfo(await redis.info("persistence"));
  const aof = persistence.get("aof_enabled") === "1";
  const rdbSaves = await redis.config("GET", "save").then(
    (reply) => (Array.isArray(reply) ? String(reply[1] ?? "") : ""),
    () => "unknown",
  );
  if (!aof && rdbSaves === "") {
    warnings.push(
      "Redis persistence is off (no AOF, no RDB snapshots): a Redis restart loses queued work; enable appendonly yes",
    );
  }
  return warnings;
}

function parseInfo(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of text.split("\r\n")) {
    const at = line.indexOf(":");
    if (at > 0) map.set(line.slice(0, at), line.slice(at + 1));
  }
  return map;
}
