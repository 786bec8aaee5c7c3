import { fileSystemFix } from "../../errors/file-system-fixes.js";
import { RelayError } from "../../errors/relay-error.js";

/**
 * This machine's file system refused to hold a file being taken into processing/ (full, read-only, no
 * permission: `errno`, one of those fileSystemCode knows): the file is not the cause, and any other file
 * would fail there too. Nothing of it is kept; `stays` says where the file waits to be taken again.
 */
export class TakeWriteError extends RelayError {
  readonly code = "TAKE_WRITE_REFUSED";

  constructor(
    /** The file, as the operator knows it (its name and where it came from). */
    readonly file: string,
    /** The folder it was being written into: processing/ of the drop folder. */
    readonly folder: string,
    readonly errno: string,
    stays: string,
    options?: ErrorOptions,
  ) {
    super(
      `${file} could not be written into ${folder}: ${fileSystemFix(errno)}. Nothing of it is kept ` +
        `there; ${stays}`,
      options,
    );
  }
}
