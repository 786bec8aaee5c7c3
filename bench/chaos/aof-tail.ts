import { readFile, stat, truncate } from "node:fs/promises";
import { join } from "node:path";

interface Sample {
  readonly at: number;
  readonly file: string;
  readonly size: number;
}

/**
 * Simulates what a power loss does to an AOF with `appendfsync everysec`: Redis has already answered
 * writes that the disk does not have yet. Sampling the size of the AOF's incremental file as the run
 * goes, `cutBack(ms)` truncates it to what it held `ms` earlier: Redis then loads an older, consistent
 * prefix (a truncated last command is dropped, `aof-load-truncated yes`), exactly as after a host crash.
 */
export class AofTail {
  private samples: Sample[] = [];

  constructor(private readonly redisDir: string) {}

  private async incrFile(): Promise<string | undefined> {
    const dir = join(this.redisDir, "appendonlydir");
    try {
      const manifest = await readFile(join(dir, "appendonly.aof.manifest"), "utf8");
      const incr = manifest.split("\n").filter((l) => l.includes(" type i"));
      const name = incr.at(-1)?.split(" ")[1];
      return name === undefined ? undefined : join(dir, name);
    } catch {
      return undefined; // between a restart and the first write
    }
  }

  async sample(now = Date.now()): Promise<void> {
    const file = await this.incrFile();
    if (file === undefined) return;
    const { size } = await stat(file);
    this.samples.push({ at: now, file, size });
    this.samples = this.samples.filter((s) => now - s.at < 10_000);
  }

  /** Call with Redis dead. Returns the bytes cut off. */
  async cutBack(ms: number, now = Date.now()): Promise<number> {
    const file = await this.incrFile();
    if (file === undefined) return 0;
    const { size } = await stat(file);
    const before = this.samples.filter((s) => s.file === file && now - s.at >= ms).at(-1);
    // No sample of this file that old (an AOF rewrite began meanwhile): all of it is recent.
    const keep = before?.size ?? 0;
    await truncate(file, keep);
    return size - keep;
  }
}
