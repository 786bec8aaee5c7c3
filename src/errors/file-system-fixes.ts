/**
 * What stops a file being written, by its errno, and what to do about it: each is a state of this
 * machine's file system that the operator fixes, never a fault of the file being written. One table for
 * every write the relay makes (reports, downloads, copies into processing/).
 */
const FIXES: Readonly<Record<string, string>> = {
  ENOSPC: "the file system is full; free space on it",
  EDQUOT: "the disk quota of the user running invoice-relay is used up; free space or raise the quota",
  EROFS: "the file system is mounted read-only; mount it read-write",
  EACCES: "permission denied; let the user running invoice-relay write to that folder",
  EPERM: "the operation is not permitted; let the user running invoice-relay write to that folder",
  EIO: "the disk reported an I/O error; check the disk",
};

/** The errno of a failed write when it is one FIXES explains, else undefined. */
export function fileSystemCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && code in FIXES ? code : undefined;
}

/** `errno` and what to do about it, for a message: "ENOSPC, the file system is full; free space on it". */
export function fileSystemFix(errno: string): string {
  return `${errno}, ${FIXES[errno] ?? "the write failed"}`;
}
