/**
 * What the process is waiting for now, each named by whoever waits (an SFTP step: the source, its
 * server, the step and the file): a process that must end while still waiting says what did not answer,
 * not a guess. Process-wide, as the hard stop that reads it is.
 */
const open = new Map<number, string>();
/** The open waits that hold one of Node's file-system threads (onFileSystem). */
const threads = new Set<number>();
let next = 0;

/** Runs `run`, named `what` among the open waits until it settles. */
export async function waitingFor<T>(what: string, run: () => Promise<T>, thread = false): Promise<T> {
  const id = next++;
  open.set(id, what);
  if (thread) threads.add(id);
  try {
    return await run();
  } finally {
    open.delete(id);
    threads.delete(id);
  }
}

/** The waits open now, oldest first. */
export function openWaits(): string[] {
  return [...open.values()];
}

/**
 * The file-system calls still under way, a pass having left them at its end: each holds a thread that
 * exit() waits for (libuv joins its threads), so a process with any ends without that wait (endProcess).
 */
export function threadsHeld(): string[] {
  return [...threads].map((id) => open.get(id) ?? "");
}
