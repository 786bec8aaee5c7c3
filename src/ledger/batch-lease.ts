import { hostname } from "node:os";
import type { RedisClient } from "./redis-client.js";

const LEASE_MS = 15_000;
const RENEW_MS = 5_000;

/**
 * One process at a time ingests a batch. The lease expires on its own if its holder dies; a holder on
 * this host whose process is gone is taken over at once, so a re-run after a crash does not wait.
 */
export class BatchLease {
  private timer: NodeJS.Timeout | undefined;
  private readonly owner = `${hostname()}:${process.pid}`;

  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
  ) {}

  async acquire(): Promise<boolean> {
    if ((await this.redis.set(this.key, this.owner, "PX", LEASE_MS, "NX")) === "OK") return this.started();
    const holder = await this.redis.get(this.key);
    if (holder !== null && deadOnThisHost(holder)) {
      // compare-and-set: only replace the dead holder's lease
      const replaced = await this.redis.eval(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end return false",
        1,
        this.key,
        holder,
        this.owner,
        LEASE_MS,
      );
      if (replaced === "OK") return this.started();
    }
    return false;
  }

  private started(): true {
    this.timer = setInterval(() => {
      void this.redis.set(this.key, this.owner, "PX", LEASE_MS, "XX").catch(() => undefined);
    }, RENEW_MS);
    this.timer.unref();
    return true;
  }

  async release(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.redis.eval(
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
      1,
      this.key,
      this.owner,
    );
  }
}

/** Whether `holder` (`<host>:<pid>`) is a process of this host that is gone. */
export function deadOnThisHost(holder: string): boolean {
  const at = holder.lastIndexOf(":");
  if (holder.slice(0, at) !== hostname()) return false;
  const pid = Number(holder.slice(at + 1));
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
