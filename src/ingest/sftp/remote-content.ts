import { createHash } from "node:crypto";
import { open, stat } from "node:fs/promises";
import type { SFTPWrapper } from "ssh2";
import type { ClaimedContent } from "../claimed-content.js";
import { writeWhole } from "../local-files.js";
import { RemoteFileSizeError } from "./errors/remote-file-size-error.js";
import { readsInOrder } from "./reads-in-order.js";

/**
 * How a file on the server stands against what was taken of it (its size and the SHA-256 of its bytes),
 * read again through one open handle: `intact` (the same bytes, and nothing after them), `grown` (those
 * bytes, more after them), `rewritten` (other bytes, or fewer), or `gone`. The verdict is the bytes'
 * alone: a server may say a size its file does not have (one that says 0 for every file, or the size
 * before a conversion), so the size it says is never taken for where the file ends. Its size and
 * modification time are the handle's, so a later `stat` that still shows them tells that nothing was
 * written since (SFTP v3: whole seconds).
 */
export type RemoteStanding =
  | { readonly kind: "intact" | "grown" | "rewritten"; readonly size: number; readonly mtimeMs: number }
  | { readonly kind: "gone" };

/**
 * One read's length and how many are under way, for the download and the check alike: 64 KiB is within
 * what every server answers whole (OpenSSH's limit is 256 KiB), and 16 in flight keep a link busy
 * across a round trip of a far server (1 MiB in flight).
 */
const READ_BYTES = 64 * 1024;
const READS_IN_FLIGHT = 16;

/** SSH_FX_NO_SUCH_FILE (SFTP v3). */
const NO_SUCH_FILE = 2;

/**
 * Reads the first `claimed.size` bytes of `path` again and compares their SHA-256 with the claim's: the
 * only check SFTP v3 offers against a file replaced by one of the same size and time (OpenSSH's server
 * has no hash extension). Reads go out `READS_IN_FLIGHT` at a time, as the download's do, so checking a
 * file costs about as long as downloading it; they are hashed in order as they come back.
 */
export async function remoteStanding(
  sftp: SFTPWrapper,
  path: string,
  claimed: ClaimedContent,
  progress: (delivered: number) => void = () => undefined,
): Promise<RemoteStanding> {
  let handle: Buffer;
  try {
    handle = await call<Buffer>((cb) => {
      sftp.open(path, "r", cb);
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === NO_SUCH_FILE) return { kind: "gone" };
    throw error;
  }
  let answered = false;
  try {
    const stats = await call<{ size: number; mtime: number }>((cb) => {
      sftp.fstat(handle, cb);
    });
    const seen = { size: stats.size, mtimeMs: stats.mtime * 1000 };
    const same = (await prefixSha256(sftp, handle, claimed.size, progress)) === claimed.sha256;
    const more = same ? await readAt(sftp, handle, Buffer.alloc(1), claimed.size) : 0;
    answered = true;
    if (!same) return { kind: "rewritten", ...seen };
    return { kind: more === 0 ? "intact" : "grown", ...seen };
  } finally {
    await closeHandle(sftp, handle, answered);
  }
}

/**
 * Closes a handle on the server, waiting for its answer when `wait`: after a failure the connection may
 * be gone, and a request on a closed connection is never answered (ssh2 neither sends nor fails it).
 */
export async function closeHandle(sftp: SFTPWrapper, handle: Buffer, wait: boolean): Promise<void> {
  const closing = call<undefined>((cb) => {
    sftp.close(handle, (error) => {
      cb(error, undefined);
    });
  }).catch(() => undefined);
  if (wait) await closing;
}

/** The SHA-256 of the first `length` bytes; undefined when the file ends before them. */
async function prefixSha256(
  sftp: SFTPWrapper,
  handle: Buffer,
  length: number,
  progress: (delivered: number) => void,
): Promise<string | undefined> {
  const hash = createHash("sha256");
  const pieces = Math.ceil(length / READ_BYTES);
  const read = async (piece: number): Promise<Buffer | undefined> => {
    const start = piece * READ_BYTES;
    const buffer = Buffer.alloc(Math.min(READ_BYTES, length - start));
    // A server may answer a read with fewer bytes than asked: ask again for the rest.
    for (let filled = 0; filled < buffer.length;) {
      const got = await readAt(sftp, handle, buffer.subarray(filled), start + filled);
      if (got === 0) return undefined; // the end of the file came first: it shrank
      progress(got);
      filled += got;
    }
    return buffer;
  };
  const shrank = await readsInOrder(pieces, READS_IN_FLIGHT, read, (buffer) => {
    if (buffer !== undefined) hash.update(buffer);
    return buffer !== undefined;
  });
  return shrank === undefined ? hash.digest("hex") : undefined;
}

/** Reads into `buffer` from `position`: the bytes read, 0 at the end of the file. */
function readAt(sftp: SFTPWrapper, handle: Buffer, buffer: Buffer, position: number): Promise<number> {
  return call<number>((cb) => {
    sftp.read(handle, buffer, 0, buffer.length, position, (error, bytes) => {
      cb(error, bytes);
    });
  });
}

/**
 * Downloads `remote` into `local`, its listed `size` bytes and never one more, going on from the bytes
 * `local` holds already (a download a pass's end cut: the caller keeps it only while the server's file
 * has the size and time it had). Reads go out `READS_IN_FLIGHT` at a time, each answer written where it
 * belongs as it comes; a read answered with fewer bytes than asked is asked again for the rest. Cut
 * short, `local` is left holding the first bytes that came without a gap, to be gone on with.
 * `progress` is told of the bytes each answer delivered (an answer with none is no progress). The end of
 * the file before `size`, or a byte after it, is a RemoteFileSizeError: a file that never ends is read
 * no further than its listing says.
 */
export async function downloadListed(
  sftp: SFTPWrapper,
  remote: string,
  local: string,
  size: number,
  progress: (delivered: number) => void = () => undefined,
): Promise<void> {
  const had = await stat(local).then(
    (s) => s.size,
    () => 0,
  );
  const from = had <= size ? had : 0;
  const handle = await call<Buffer>((cb) => {
    sftp.open(remote, "r", cb);
  });
  const out = await open(local, from > 0 ? "r+" : "w");
  const pieces = Math.ceil((size - from) / READ_BYTES);
  const lengthOf = (piece: number) => Math.min(READ_BYTES, size - from - piece * READ_BYTES);
  // The bytes of each piece written so far, from its start.
  const filled: number[] = new Array<number>(pieces).fill(0);
  let complete = false;
  try {
    // Where the file ended within the piece, or undefined once the piece is here whole.
    const read = async (piece: number): Promise<number | undefined> => {
      const start = from + piece * READ_BYTES;
      const buffer = Buffer.alloc(lengthOf(piece));
      while ((filled[piece] ?? 0) < buffer.length) {
        const at = filled[piece] ?? 0;
        const got = await readAt(sftp, handle, buffer.subarray(at), start + at);
        if (got === 0) return start + at;
        progress(got);
        await writeWhole(out, buffer.subarray(at, at + got), start + at);
        filled[piece] = at + got;
      }
      return undefined;
    };
    const cut = await readsInOrder(pieces, READS_IN_FLIGHT, read, (ended) => ended === undefined);
    if (cut?.stoppedAt !== undefined)
      throw new RemoteFileSizeError(remote, size, { kind: "fewer", bytes: cut.stoppedAt });
    if ((await readAt(sftp, handle, Buffer.alloc(1), size)) > 0)
      throw new RemoteFileSizeError(remote, size, { kind: "more" });
    complete = true;
  } finally {
    if (!complete) await out.truncate(from + gapless(filled, lengthOf)).catch(() => undefined);
    await out.close();
    await closeHandle(sftp, handle, complete);
  }
}

/** The bytes written from the first piece on with no gap: whole pieces, then the first one not whole. */
function gapless(filled: readonly number[], lengthOf: (piece: number) => number): number {
  let bytes = 0;
  for (const [piece, n] of filled.entries()) {
    bytes += n;
    if (n < lengthOf(piece)) break;
  }
  return bytes;
}

function call<T>(start: (cb: (error: Error | undefined | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    start((error, value) => {
      if (error) reject(error);
      else resolve(value);
    });
  });
}
