import { NEXT_SCAN } from "../lifecycle/pass-signal.js";

/** A read of a claimed file under way in this process. */
interface Read {
  readonly path: string;
  /** When it began (epoch ms). */
  readonly since: number;
  /** The scan of `start` it began in; undefined in a pass of its own. */
  readonly scan: ScanReads | undefined;
  /** Bytes it has delivered so far, and as many at the last look (ScanReads.due). */
  delivered: number;
  looked: number | undefined;
  readonly cut: AbortController;
}

/**
 * The reads of claimed files under way in this process: process-wide, as the file-system threads such a
 * read holds are.
 */
const underWay = new Set<Read>();

/**
 * The reads of one scan of `start`. Progress is what is delivered: each time another scan falls due
 * (`due`), a read of this scan already under way the last such time, and that has delivered no byte
 * since, is cut (NEXT_SCAN), so one hung file never keeps later scans from taking new files; a slow read
 * whose bytes flow is waited for, however long it takes.
 */
export class ScanReads {
  due(): void {
    for (const read of underWay) {
      if (read.scan !== this || read.cut.signal.aborted) continue;
      if (read.looked === read.delivered) read.cut.abort(NEXT_SCAN);
      else read.looked = read.delivered;
    }
  }
}

/**
 * The read of the claimed file at `path`, in `scan` if any: `cut` is the signal of its cut
 * (ScanReads.due); `during` runs the file-system call itself, noted as under way till it returns.
 */
export function readOf(path: string, scan: ScanReads | undefined) {
  const read: Read = {
    path,
    since: Date.now(),
    scan,
    delivered: 0,
    looked: undefined,
    cut: new AbortController(),
  };
  return {
    cut: scan === undefined ? undefined : read.cut.signal,
    during: <T>(call: (delivered: (bytes: number) => void) => Promise<T>): Promise<T> => {
      underWay.add(read);
      return call((bytes) => {
        read.delivered += bytes;
      }).finally(() => underWay.delete(read));
    },
  };
}

/**
 * When a read of the claimed file at `path` began that a scan of this process cut, or an earlier scan
 * left under way (a hung share): the file is not opened again while that read holds its thread. A read
 * of the same scan (the drop pass and an SFTP source's pulled file side by side), or of no scan, is none.
 */
export function readLeftSince(path: string, scan: ScanReads | undefined): number | undefined {
  let since: number | undefined;
  for (const read of underWay)
    if (read.path === path && read.scan !== undefined && (read.scan !== scan || read.cut.signal.aborted))
      since = Math.min(since ?? read.since, read.since);
  return since;
}
