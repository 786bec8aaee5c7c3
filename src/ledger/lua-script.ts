import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { RedisClient } from "./redis-client.js";

const INCLUDE = /^-- @include "([a-z-]+)"$/gm;
const folder = new URL("./lua/", import.meta.url);

/** A script's source with its `-- @include "name"` lines replaced by lua/includes/name.lua. */
export function luaSource(name: string): string {
  const source = readFileSync(new URL(`${name}.lua`, folder), "utf8");
  return source.replace(INCLUDE, (_, include: string) =>
    readFileSync(new URL(`includes/${include}.lua`, folder), "utf8"),
  );
}

/**
 * A Lua script of src/ledger/lua, run by SHA, loaded on first use or after a Redis restart (NOSCRIPT).
 * Every key it touches is passed in KEYS, which is also how a cluster client routes it.
 */
export class LuaScript {
  readonly source: string;
  readonly sha: string;

  constructor(readonly name: string) {
    this.source = luaSource(name);
    this.sha = createHash("sha1").update(this.source).digest("hex");
  }

  async run(
    redis: RedisClient,
    /** The script's KEYS: the names it touches, built by LedgerNames. */
    names: readonly string[],
    args: readonly (string | number | Buffer)[],
  ): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, names.length, ...names, ...args);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("NOSCRIPT"))
        return redis.eval(this.source, names.length, ...names, ...args);
      throw error;
    }
  }
}
