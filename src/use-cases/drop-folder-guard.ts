import type { Logger } from "../log/logger.js";
import type { DropFolder } from "../ingest/drop-folder.js";
import { checkDropFolder } from "../ingest/drop-folder-usable.js";
import { takeDropFolder } from "../ingest/drop-folder-owner.js";
import { DropFolderUnusableError } from "../ingest/errors/drop-folder-unusable-error.js";
import { DropFolderOwnedError } from "../ingest/errors/drop-folder-owned-error.js";

/**
 * For a long-running process that scans the drop folder: checks before each scan that the folder can be
 * used and that it is this deployment's (takeDropFolder). A folder that cannot be used (or is another
 * deployment's) skips the scan, is said once per change in the log, and is what /readyz reports; the
 * next scan checks again.
 */
export class DropFolderGuard {
  private problem = "not checked yet";

  constructor(
    private readonly folder: DropFolder,
    private readonly deployment: string,
    private readonly logger: Logger,
  ) {}

  /** "ok", or why the folder could not be used at its last check. */
  state(): string {
    return this.problem;
  }

  /** Undefined when the folder can be used now; else what stops it (said in the log). */
  async check(): Promise<DropFolderUnusableError | DropFolderOwnedError | undefined> {
    try {
      await checkDropFolder(this.folder);
      await takeDropFolder(this.folder, this.deployment);
      if (this.problem !== "ok" && this.problem !== "not checked yet")
        this.logger.info({ dropDir: this.folder.root }, "the drop folder can be used again");
      this.problem = "ok";
      return undefined;
    } catch (error) {
      if (!(error instanceof DropFolderUnusableError || error instanceof DropFolderOwnedError)) throw error;
      if (this.problem !== error.message)
        this.logger.error(
          { dropDir: this.folder.root, code: error.code },
          `${error.message}. No file is taken until it can be used; each scan checks again.`,
        );
      this.problem = error.message;
      return error;
    }
  }
}
