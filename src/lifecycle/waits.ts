/**
 * What the process is waiting for now, each named by whoever waits (an SFTP step: the source, its
 * server, the step and the file): a process that must end while still waiting says what did not answer,
 * not a guess. Process-wide, as the hard stop that reads it is.
 */
const open = new Map<number, string>();
let next = 0;

/** Runs `run`, named `what` among the open waits until it settles. */
export async function waitingFor<T>(what: string, run: () => Promise<T>): Promise<T> {
  const id = next++;
  open.set(id, what);
  try {
    return await run();
  } finally {
    open.delete(id);
  }
}

/** The waits open now, oldest first. */
export function openWaits(): string[] {
  return [...open.values()];
}
