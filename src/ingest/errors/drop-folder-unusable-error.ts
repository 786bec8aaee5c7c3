import { RelayError } from "../../errors/relay-error.js";

/**
 * The drop folder cannot be used: missing (an unmounted share, a mistyped DROP_DIR), not a folder, or
 * on a file system that refuses to hold the relay's subfolders. The pass stops before any file is taken.
 */
export class DropFolderUnusableError extends RelayError {
  readonly code = "DROP_FOLDER_UNUSABLE";

  constructor(
    readonly path: string,
    /** What is wrong with it, e.g. `does not exist`. */
    readonly problem: string,
    /** What to do about it. */
    readonly remedy: string,
    options?: ErrorOptions,
  ) {
    super(`the drop folder ${path} ${problem}: ${remedy}`, options);
  }
}
