import { RemoteFileRefusedError } from "../ingest/sftp/errors/remote-file-refused-error.js";
import { RemoteFileSizeError } from "../ingest/sftp/errors/remote-file-size-error.js";
import { RemoteFileUnstableError } from "../ingest/sftp/errors/remote-file-unstable-error.js";
import { fileSystemCode } from "../errors/file-system-fixes.js";
import { escapedText } from "../names/shown-text.js";

/**
 * Why one remote file cannot go on this pass, when the failure is that file's alone: this machine's
 * file system refused a write for it (a name too long), or the server refused an operation on it, or the
 * file reads as other bytes at each read or other than its listed size. Undefined for anything else (a
 * dropped connection, Redis): the source's, tried again as a whole. A file system that is full or
 * read-only is no file's problem: `machineRefusal` tells it first.
 */
export function fileProblem(error: unknown): string | undefined {
  if (error instanceof RemoteFileUnstableError)
    return `${escapedText(error.message)}; it is read again at the next pass`;
  if (error instanceof RemoteFileSizeError)
    return `${escapedText(error.message)}; it is read again at the next pass`;
  if (error instanceof RemoteFileRefusedError)
    return `${escapedText(error.message)}; it is tried again at the next pass`;
  if (!isFileSystemError(error)) return undefined;
  if (error.code === "ENAMETOOLONG")
    return "its name is too long for the names made from it on this machine; rename the file to a shorter name";
  return `it could not be written here (${escapedText(error.message)}); it is tried again at the next pass`;
}

/** An error of this machine's file system: Node's, with the system call that failed. */
function isFileSystemError(error: unknown): error is NodeJS.ErrnoException {
  const e = error as NodeJS.ErrnoException | undefined;
  return error instanceof Error && typeof e?.syscall === "string" && typeof e.code === "string";
}

/**
 * The errno of this machine's file system refusing a write for a state the operator fixes (full,
 * read-only, no permission: src/errors/file-system-fixes.ts), else undefined.
 */
export function machineRefusal(error: unknown): string | undefined {
  return isFileSystemError(error) ? fileSystemCode(error) : undefined;
}
