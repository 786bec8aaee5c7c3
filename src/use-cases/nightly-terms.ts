import type { BatchMeta } from "../ledger/batch-store.js";
import type { Readiness } from "../ingest/drop-folder.js";
import type { BatchLostError } from "../ingest/errors/batch-lost-error.js";
import type { BatchFileGoneError } from "../ingest/errors/batch-file-gone-error.js";
import type { IngestInterruptedError } from "../ingest/errors/ingest-interrupted-error.js";
import type { PastResultsUnavailableError } from "../ingest/errors/past-results-unavailable-error.js";
import type { ReportWriteError } from "../results/errors/report-write-error.js";
import type { FileSystemUnansweredError } from "../errors/file-system-unanswered-error.js";

import type { SubmitConfig } from "../config/load.js";
import type { SubmissionHooks } from "../queue/submission-service.js";
import type { DropPassDeps } from "./drop-pass.js";
import type { RemotePass } from "./remote-pass.js";

// What a nightly pass (nightly-pass.ts) is told, what it says as it goes and what it ends with.

export interface NightlyPassDeps extends Omit<DropPassDeps, "signal"> {
  readonly config: SubmitConfig;
  /** Observers of the pass's submission worker (metrics, alerts); its ledger clock is `now`. */
  readonly submissionHooks?:
    Pick<SubmissionHooks, "onAttempt" | "onOutcome" | "onApiKeyRefused" | "onHeld"> | undefined;
  /**
   * The SFTP sources (docs/sftp.md): their settled files are taken into processing/ before the drop
   * folder is claimed, and once the pass is finished the files are archived and the results sent back.
   * A source that fails is recorded there (`failures()`); it never stops the pass.
   */
  readonly remote?: RemotePass | undefined;
}

export interface NightlyPassOptions {
  /** Epoch ms after which the pass stops waiting (work left continues next time). */
  readonly deadline?: number | undefined;
  /** Aborted (SIGTERM, SIGINT): ingest stops between chunks and waiting ends. */
  readonly signal: AbortSignal;
  readonly onProgress?: (progress: PassProgress) => void;
  /** The batches the pass waits for, as each round of waiting reads them (the pass's record keeps them). */
  readonly onBatches?: (batches: readonly BatchMeta[]) => void;
  readonly pollMs?: number;
  /** Before each check that the files of the pass are still as claimed (tests place a writer there). */
  readonly beforeArchiveCheck?: () => Promise<void>;
}

/** A file of the pass that grew or changed since its claim and has not settled: taken again later. */
export interface GrowingFile {
  readonly file: string;
  readonly batch: string;
  readonly claimed: number;
  readonly size: number;
  /**
   * `writing`: changed within SETTLE_MS; `unmarked`: DONE_MARKER_SUFFIX is set and its marker is missing;
   * `settled`: the pass was stopped before it took the file again.
   */
  readonly readiness: Readiness;
  /**
   * For a file of an SFTP source: its name. Its copy on the server grew or changed after it was taken
   * and is still being written; `batch` is the batch it is taken again as, `size` its size last seen.
   */
  readonly source?: string | undefined;
}

export interface PassProgress {
  readonly files: number;
  readonly filesDone: number;
  readonly invoices: number;
  readonly pending: number;
  readonly retrying: number;
}

/**
 * - `nothing-to-do`: no ready file and no unfinished batch;
 * - `finished`: every batch waited for is reported, rejected, or `changed` (never reported), and every
 *   file of theirs that grew or changed since its claim was taken again, save those in `growing` (still
 *   being written at the deadline, or waiting for their done-marker);
 * - `api-key-refused`: the service refused the API key; submission is paused, nothing was marked failed;
 * - `stopped`: interrupted or past the deadline, with invoices not final yet (they stay queued);
 * - `failed`: ingest interrupted or the results of record unreachable, a batch Redis lost whose file
 *   is gone, a report the file system refused, or a file-system call not answered by the deadline (the
 *   error says what to do).
 */
export type NightlyOutcome =
  | { readonly kind: "nothing-to-do" }
  | {
      readonly kind: "finished";
      readonly batches: readonly BatchMeta[];
      readonly growing: readonly GrowingFile[];
    }
  | { readonly kind: "api-key-refused"; readonly httpStatus: number; readonly detail: string }
  | {
      readonly kind: "stopped";
      readonly why: "interrupted" | "deadline";
      readonly pending: number;
      readonly redisDown: boolean;
      /** The service has refused every request for capacity (429) for a minute or more: a quota spent. */
      readonly refusingForCapacity: boolean;
    }
  | {
      readonly kind: "failed";
      readonly error:
        | BatchLostError
        | BatchFileGoneError
        | IngestInterruptedError
        | PastResultsUnavailableError
        | ReportWriteError
        | FileSystemUnansweredError;
    };
