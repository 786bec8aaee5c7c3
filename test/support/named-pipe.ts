import { closeSync, constants, openSync } from "node:fs";

/**
 * Lets go of a reader waiting to open the named pipe at `path` (a read that never returns, in a test):
 * opened for writing, without waiting when no reader is left (ENXIO), then closed.
 */
export function releasePipe(path: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // No reader waits on it any more (its process ended): nothing to let go.
  }
}
