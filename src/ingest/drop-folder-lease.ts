import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import { z } from "zod";
import type { Logger } from "../log/logger.js";
import type { DropFolder } from "./drop-folder.js";
import { DropFolderLeasedError } from "./errors/drop-folder-leased-error.js";

/**
 * How often a holder renews its lease: often enough that a lease left by a process that died is taken
 * over within minutes (LEASE_STALE_MS), rarely enough to cost nothing on a network share.
 */
export const LEASE_RENEW_MS = 20_000;

/**
 * A lease not renewed for this long is stale and taken over: six missed renewals mean the holder is
 * gone (killed, its machine down), not slow; hosts sharing a folder keep their clocks within seconds (NTP).
 */
export const LEASE_STALE_MS = 6 * LEASE_RENEW_MS;

/**
 * The lease's file, in the relay's own subfolder reports/: a dot-name, no report's. Not in processing/,
 * whose every file is a claimed one or a copy on its way there.
 */
export function leasePath(folder: DropFolder): string {
  return join(folder.reports, ".deployment-lease.json");
}

const leaseRecord = z.object({
  deployment: z.string(),
  host: z.string(),
  pid: z.number().int(),
  renewed_at: z.number(),
});
type LeaseRecord = z.infer<typeof leaseRecord>;

export interface LeaseOptions {
  readonly logger: Logger;
  readonly staleAfterMs?: number;
  readonly renewEveryMs?: number;
  readonly now?: () => number;
}

/**
 * One deployment per drop folder: the lease names the deployment (its QUEUE_PREFIX and Redis) that
 * serves the folder. Processes of the same deployment share it (claims are atomic renames); another
 * deployment is refused while the lease is fresh, and takes it over once it is stale.
 */
export class DropFolderLease {
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly folder: DropFolder,
    readonly deployment: string,
    private readonly options: LeaseOptions,
  ) {}

  /** Takes the folder's lease for `deployment`, or throws DropFolderLeasedError naming both deployments. */
  static async take(folder: DropFolder, deployment: string, options: LeaseOptions): Promise<DropFolderLease> {
    const lease = new DropFolderLease(folder, deployment, options);
    await lease.renew();
    lease.timer = setInterval(() => {
      lease.renew().catch((error: unknown) => {
        options.logger.error(
          { err: error instanceof Error ? error.message : String(error), path: leasePath(folder) },
          "the drop folder's lease could not be renewed",
        );
      });
    }, options.renewEveryMs ?? LEASE_RENEW_MS);
    lease.timer.unref();
    return lease;
  }

  /** Writes the lease again, unless another deployment holds it and it is fresh (then throws). */
  async renew(): Promise<void> {
    const path = leasePath(this.folder);
    const held = await readLease(path);
    if (held !== undefined && held.deployment !== this.deployment && !this.stale(held))
      throw this.refused(held);
    const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
    await writeFile(temp, JSON.stringify(this.record()));
    try {
      if (held === undefined) {
        // No lease yet: link fails when another process made one meanwhile, which is then judged.
        try {
          await link(temp, path);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
          await this.renew();
          return;
        }
      } else await rename(temp, path);
    } finally {
      await rm(temp, { force: true });
    }
    // Two deployments taking over a stale lease at once: the last rename wins, the other is refused.
    const now = await readLease(path);
    if (now !== undefined && now.deployment !== this.deployment) throw this.refused(now);
  }

  /** Stops renewing and removes the lease when this process wrote it last. */
  async release(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    const path = leasePath(this.folder);
    const held = await readLease(path).catch(() => undefined);
    if (held?.pid === process.pid && held.host === hostname() && held.deployment === this.deployment)
      await rm(path, { force: true }).catch(() => undefined);
  }

  private stale(held: LeaseRecord): boolean {
    return this.now() - held.renewed_at > (this.options.staleAfterMs ?? LEASE_STALE_MS);
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private record(): LeaseRecord {
    return { deployment: this.deployment, host: hostname(), pid: process.pid, renewed_at: this.now() };
  }

  private refused(held: LeaseRecord): DropFolderLeasedError {
    return new DropFolderLeasedError(
      this.folder.root,
      this.deployment,
      `${held.deployment}, process ${held.pid} on ${held.host}`,
      leasePath(this.folder),
      Math.round((this.options.staleAfterMs ?? LEASE_STALE_MS) / 1000),
    );
  }
}

/** The lease as written, or undefined when there is none; one that cannot be read (cut short) is stale. */
async function readLease(path: string): Promise<LeaseRecord | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const unreadable = { deployment: "an unreadable lease", host: "", pid: 0, renewed_at: 0 };
  try {
    const parsed = leaseRecord.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : unreadable;
  } catch {
    return unreadable;
  }
}
