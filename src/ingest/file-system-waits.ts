import { FileSystemUnansweredError } from "../errors/file-system-unanswered-error.js";
import { endedBy } from "../lifecycle/pass-signal.js";
import { waitingFor } from "../lifecycle/waits.js";
import { withinSignal } from "../lifecycle/within-signal.js";

/**
 * A file-system call of a pass (a claim's or archive's rename, a read of a claimed file), on the pass's
 * one signal: a file system that stops answering (a hung share) ends it at the pass's deadline with
 * FileSystemUnansweredError naming `what`. Node cannot take back a call its file system holds, so the
 * call stays named among the open waits until it returns, and the process ends without waiting for it
 * (endProcess).
 */
export function onFileSystem<T>(
  what: string,
  signal: AbortSignal | undefined,
  call: () => Promise<T>,
  ended: (signal: AbortSignal) => Error = (s) => new FileSystemUnansweredError(what, endedBy(s)),
): Promise<T> {
  return withinSignal(waitingFor(what, call, true), signal, ended);
}

/**
 * The chunks of a file read as a stream, each on the pass's signal (onFileSystem): progress is bytes
 * delivered, so a read that never returns ends at the deadline, whatever came before it, with `ended`
 * (a read cut so is as an ingest stopped between two chunks: the file stays claimed).
 */
export async function* readWithin<T>(
  what: string,
  signal: AbortSignal | undefined,
  chunks: AsyncIterable<T>,
  ended: () => Error,
): AsyncGenerator<T> {
  const reader = chunks[Symbol.asyncIterator]();
  for (;;) {
    const step = await onFileSystem(what, signal, () => reader.next(), ended);
    if (step.done === true) return;
    yield step.value;
  }
}
