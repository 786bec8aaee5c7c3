import { watch, type FSWatcher, type WatchListener } from "node:fs";
import { Worker } from "bullmq";
import type { RedisClient } from "../ledger/redis-client.js";
import { finalizeCompleteBatches } from "../results/finalize.js";
import { resumeRequeues } from "../queue/requeued-jobs.js";
import { endConnection } from "../queue/connection.js";
import { closeWithin } from "../queue/leave-jobs.js";
import { RelayQueue } from "../queue/relay-queue.js";
import { dropPass, resumeClaimedFiles, type DropPassDeps } from "./drop-pass.js";
import { IngestInterruptedError } from "../ingest/errors/ingest-interrupted-error.js";
import { isDoneMarker, isDropName, parseClaimedName } from "../ingest/drop-folder.js";
import type { SourceProfile } from "../ingest/profiles/source-profile.js";
import type { RemotePass } from "./remote-pass.js";
import { z } from "zod";
import type { BatchMeta } from "../ledger/batch-store.js";
import { Passes } from "../ledger/passes.js";
import { isFinished } from "./pass-upkeep.js";
import { PassWatch, type PassWatchDeps } from "./pass-watch.js";
import { onEachScanDue } from "../queue/scan-schedule.js";
import { ScanReads } from "../ingest/reads-under-way.js";
import type { LeftFile } from "../names/file-name.js";

const SCAN_QUEUE = "drop-scans";
const SCHEDULER_ID = "drop-folder-scan";

export interface ScanServiceOptions {
  readonly deps: DropPassDeps;
  readonly connection: RedisClient;
  readonly prefix: string;
  readonly cron: string;
  readonly tz: string | undefined;
  readonly settleMs: number;
  readonly watch: boolean;
  /** How often this process writes the reports of finished batches whose files it has. */
  readonly reportEveryMs?: number;
  /**
   * Loads the source profiles again before each scan, so an edited file is used from the next scan on.
   * When it throws (a broken file), that scan claims nothing and says why; the next scan tries again.
   * Without it, `deps.profiles` are used throughout.
   */
  readonly loadProfiles?: () => Promise<readonly SourceProfile[]>;
  /**
   * The SFTP sources (docs/sftp.md): every scan takes their settled files beside the drop folder, and
   * names those still unsettled after polling them again as `run` does (pullSettled). Every `remotePollMs`
   * they are polled again: with `watch`, a scan; without, only to archive and send back the results of
   * batches reported since (a new file waits for the schedule).
   */
  readonly remote?: RemotePass | undefined;
  readonly remotePollMs?: number | undefined;
  /**
   * Before each scan: whether the drop folder can be used (DropFolderGuard). When not, the scan takes
   * nothing and is no pass; the next scan asks again.
   */
  readonly folderUsable?: () => Promise<boolean>;
  /**
   * Each scan that takes files or names files left (and each scheduled one) is recorded as a pass, ended once its batches
   * are finished with the exit code `run` would have given them (src/use-cases/pass-watch.ts).
   */
  readonly passes: {
    readonly deps: PassWatchDeps;
    /** `left`: how many files the scan saw and left where they are. */
    readonly exitCodeOf: (batches: readonly BatchMeta[], left: number) => number;
  };
}

const scanData = z.object({ reason: z.string() }).catch({ reason: "unknown" });
type ScanJobData = z.infer<typeof scanData>;

export interface ScanService {
  /** Stops scanning; a scan under way gets `graceMs`, then is left for the next process. */
  close(graceMs: number): Promise<void>;
}

/**
 * Scans of the drop folder as BullMQ jobs: a job scheduler adds one on the cron (the same scheduler id
 * from every `start` process, so one tick is one job), file events add one when an upload has settled,
 * and any process's scan worker takes it, so several processes share the work without doing it twice
 * (claims are atomic renames besides).
 */
export async function startScanService(options: ScanServiceOptions): Promise<ScanService> {
  const logger = options.deps.logger;
  // The profiles last loaded without error: reports and repairs between scans read files with them.
  let deps = options.deps;
  const queue = new RelayQueue<ScanJobData>(SCAN_QUEUE, {
    connection: options.connection,
    prefix: options.prefix,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: { count: 100 } },
  });
  await queue.upsertJobScheduler(
    SCHEDULER_ID,
    { pattern: options.cron, ...(options.tz === undefined ? {} : { tz: options.tz }) },
    { name: "scan", data: { reason: "schedule" } },
  );
  // Each time another scan falls due (the schedule's next time, or a scan asked for), a read of a claimed
  // file by the scan under way that delivered nothing since the last such time is cut and named, not
  // awaited (ScanReads): one hung file never keeps later scans from taking new files.
  let scanning: ScanReads | undefined;
  const scanDue = (): void => scanning?.due();
  const workerConnection = options.connection.duplicate();
  const worker = new Worker(
    SCAN_QUEUE,
    async (job) => {
      if (options.loadProfiles !== undefined) {
        try {
          deps = { ...deps, profiles: await options.loadProfiles() };
        } catch (error) {
          logger.error(
            { err: error instanceof Error ? error.message : String(error), reason: job.data as unknown },
            "source profiles could not be loaded: this scan claims no file; fix the file, the next scan loads it again",
          );
          await finalizeCompleteBatches(deps);
          return 0;
        }
      }
      if (options.folderUsable !== undefined && !(await options.folderUsable())) return 0;
      const pass = PassWatch.starting(options.passes.deps, "scan");
      const reads = new ScanReads();
      scanning = reads;
      const noMoreDue = onEachScanDue(options.cron, options.tz, scanDue);
      // The files this scan sees and leaves where they are: named in the log and in its record.
      const left: LeftFile[] = [];
      // The SFTP sources are taken while the drop folder is scanned: a slow source delays nothing else.
      // Files not settled are polled again and, if still so, named, as `run` does (pullSettled).
      const onLeft = (file: LeftFile) => left.push(file);
      const taking = options.remote?.take(undefined, true, undefined, onLeft) ?? Promise.resolve(undefined);
      taking.catch(() => undefined); // awaited below, after the drop folder
      const scanDeps = { ...deps, onLeft, reads };
      let passed;
      try {
        passed = await dropPass(scanDeps, options.settleMs, {
          unrecorded: options.remote === undefined ? undefined : () => false,
        });
        const pulled = await taking;
        if (options.remote !== undefined) passed.push(...(await resumeClaimedFiles({ ...scanDeps, pulled })));
      } catch (error) {
        await taking.catch(() => undefined);
        // The process is stopping while a file waits for room in the window: nothing failed.
        if (!(error instanceof IngestInterruptedError)) throw error;
        logger.info(
          { file: error.file },
          "stopping: the file stays in processing/ and the next scan resumes it",
        );
        return 0;
      } finally {
        noMoreDue();
        if (scanning === reads) scanning = undefined;
      }
      if (passed.length > 0)
        logger.info({ reason: job.data as unknown, files: passed.length }, "drop folder scanned");
      // A scan that took nothing is no pass, unless it was the schedule's or it named files left where
      // they are (status and the console show them, as run's): recorded, it leaves the last-pass gauges
      // alone (Passes.lastOutcome).
      if (passed.length > 0 || left.length > 0 || scanData.parse(job.data).reason === "schedule") {
        pass.noteLeft(left);
        await pass.open(passed.map((p) => p.file.batchId));
      }
      await finalizeCompleteBatches(deps);
      await endFinishedScans(deps, options.passes);
      return passed.length;
    },
    { connection: workerConnection, prefix: options.prefix, concurrency: 1 },
  );
  worker.on("error", (error) => {
    logger.error({ err: error }, "scan worker error");
  });
  // Ready before closable (as the submission worker): its blocking connection is what a close must end.
  const blocking = await worker.waitUntilReady();
  worker.on("failed", (_job, error) => {
    logger.error({ err: error }, "drop folder scan failed; the next scan retries");
  });

  // Files left in processing/ by a process that died are resumed now, not at the next tick.
  await requestScan(queue, "startup", 0);

  const watchers: FSWatcher[] = [];
  let debounce: NodeJS.Timeout | undefined;
  // An upload writes in bursts: scan once it has been quiet for the settle time.
  const scanOnceQuiet = () => {
    if (debounce !== undefined) clearTimeout(debounce);
    // A job id of its own: a file that lands while an earlier scan runs must not be folded into it.
    debounce = setTimeout(() => {
      scanDue();
      void requestScan(queue, "watch", 0, `scan-watch-${Date.now()}`).catch(() => undefined);
    }, options.settleMs + 250);
  };
  // A folder that cannot be used now (missing, unmounted) is watched by nothing: scheduled scans go on.
  const watchIn = (dir: string, listener: WatchListener<string>) => {
    try {
      watchers.push(watch(dir, { persistent: false }, listener));
    } catch (error) {
      logger.error({ err: error, dir }, "watching the drop folder failed; scheduled scans go on");
    }
  };
  if (options.watch) {
    watchIn(deps.folder.root, (_event, name) => {
      // A done-marker landing is what makes its file ready (DONE_MARKER_SUFFIX).
      if (name === null || isDropName(name) || isDoneMarker(deps.folder, name)) scanOnceQuiet();
    });
    // A claimed file written to after its claim (a writer's open handle, even once archived) is taken
    // again, whole, once it has settled (take-again.ts): its writes are watched too.
    for (const dir of [deps.folder.archive, deps.folder.processing])
      watchIn(dir, (event, name) => {
        const claimed = name === null ? undefined : parseClaimedName(name);
        if (event === "change" && (claimed === undefined || isDropName(claimed.name))) scanOnceQuiet();
      });
    for (const watcher of watchers)
      watcher.on("error", (error) => {
        logger.error({ err: error }, "watching the drop folder failed; scheduled scans go on");
      });
    // A file dropped while this process started, before the watcher existed, raises no event, and the
    // startup scan may have found it still settling: one more scan once it has settled.
    await requestScan(queue, "watch-start", options.settleMs + 250);
  }

  const reports = setInterval(() => {
    finalizeCompleteBatches(deps)
      .then(() => endFinishedScans(deps, options.passes))
      .catch((error: unknown) => {
        logger.error({ err: error }, "writing reports failed; retrying");
      });
    // a key put back to queued while a worker still held its old job gets its job once that one is done
    resumeRequeues(deps).catch((error: unknown) => {
      logger.error({ err: error }, "repairing requeued invoices failed; retrying");
    });
  }, options.reportEveryMs ?? 2000);
  reports.unref();

  const remote = options.remote;
  const remotePolls =
    remote === undefined
      ? undefined
      : setInterval(
          () => {
            if (options.watch) {
              scanDue();
              void requestScan(queue, "remote-poll", 0, `scan-remote-${Date.now()}`).catch(() => undefined);
            } else
              remote.finish().catch((error: unknown) => {
                logger.error({ err: error }, "finishing the SFTP sources' batches failed; retrying");
              });
          },
          options.remotePollMs ?? Math.max(options.settleMs + 250, 1_000),
        );
  remotePolls?.unref();

  return {
    close: async (graceMs) => {
      clearInterval(reports);
      if (remotePolls !== undefined) clearInterval(remotePolls);
      if (debounce !== undefined) clearTimeout(debounce);
      for (const watcher of watchers) watcher.close();
      if (!(await closeWithin(worker, blocking, graceMs)))
        logger.warn({ graceMs }, "grace period over: the scan under way is left to the next scan");
      await queue.close();
      endConnection(workerConnection);
    },
  };
}

/** One pending scan at a time per reason: a fixed job id makes repeated requests collapse into one. */
async function requestScan(
  queue: RelayQueue<ScanJobData>,
  reason: string,
  delay: number,
  jobId = `scan-${reason}`,
): Promise<void> {
  await queue.add("scan", { reason }, { jobId, delay });
}

/**
 * Ends the scans (of any `start` process) whose batches are all finished: their records get their end,
 * outcome and exit code. A batch gone from the ledger has passed its retention, so it is finished too.
 */
async function endFinishedScans(deps: DropPassDeps, passes: ScanServiceOptions["passes"]): Promise<void> {
  const open = await new Passes(passes.deps.redis, passes.deps.prefix).open();
  for (const record of open.filter((p) => p.kind === "scan")) {
    const metas = await Promise.all(record.batches.map((id) => deps.batches.get(id)));
    const known = metas.filter((m): m is BatchMeta => m !== undefined);
    if (!known.every(isFinished)) continue;
    const left = (record.left?.length ?? 0) + (record.leftOut ?? 0);
    await PassWatch.of(passes.deps, record).end(known, passes.exitCodeOf(known, left));
  }
}
