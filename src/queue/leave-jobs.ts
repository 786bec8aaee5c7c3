import type { Worker } from "bullmq";
import { endConnection, type Endable } from "./connection.js";

/**
 * Makes a closing worker leave the jobs it still holds rather than finish them: they stay active in
 * Redis until their lock lapses, and the next worker takes them (same keys, so the service sees no
 * second invoice).
 *
 * Needed because BullMQ 5 writes a job's end (completed, failed, back to wait) again and again for as
 * long as Redis refuses it, and once the worker is closing it does so without a pause: with Redis away
 * the process spins at full CPU and never exits. The only thing that stops those writes is the worker's
 * connection being marked as closing, which its own close does only after every job in hand has
 * ended. BullMQ 6 gives up by itself once closing; with it this becomes unnecessary.
 */
export async function leaveJobsInHand(worker: Worker): Promise<void> {
  const connection: unknown = Reflect.get(worker, "connection");
  if (!isClosable(connection)) throw new TypeError("BullMQ's Worker has no connection to close");
  // Forced: a connection handed in by the caller (ours) is left open, only marked as closing.
  await connection.close(true);
}

function isClosable(value: unknown): value is { close(force: boolean): Promise<void> } {
  return typeof value === "object" && value !== null && "close" in value && typeof value.close === "function";
}

/**
 * Closes `worker`, giving the jobs in hand `graceMs` to finish; past it, ends its blocking connection
 * (`blocking`, as waitUntilReady gave it: BullMQ's close waits for that connection's end, which with
 * Redis away never comes, taskforcesh/bullmq#4656) and leaves the jobs, so the close ends even while
 * Redis is away. Whether the worker closed within the grace.
 */
export async function closeWithin(worker: Worker, blocking: Endable, graceMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => {
      resolve("late");
    }, graceMs);
  });
  const closing = worker.close().then(() => "closed" as const);
  const closed = (await Promise.race([closing, late])) === "closed";
  clearTimeout(timer);
  if (!closed) {
    endConnection(blocking);
    await leaveJobsInHand(worker);
  }
  return closed;
}
