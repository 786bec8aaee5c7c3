import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/** A Lua script run by SHA, loaded on first use or after a Redis restart (NOSCRIPT). */
export class LuaScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash("sha1").update(source).digest("hex");
  }

  async run(redis: Redis, args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, 0, ...args);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("NOSCRIPT"))
        return redis.eval(this.source, 0, ...args);
      throw error;
    }
  }
}
