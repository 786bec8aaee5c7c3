import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import type { SFTPWrapper } from "ssh2";
import type { ClaimedContent } from "../claimed-content.js";

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

/** One read's length and how many are under way: those of the download (session.ts, fastGet). */
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
  answer: () => void = () => undefined,
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
  try {
    const stats = await call<{ size: number; mtime: number }>((cb) => {
      sftp.fstat(handle, cb);
    });
    const seen = { size: stats.size, mtimeMs: stats.mtime * 1000 };
    const same = (await prefixSha256(sftp, handle, claimed.size, answer)) === claimed.sha256;
    if (!same) return { kind: "rewritten", ...seen };
    const more = await readAt(sftp, handle, Buffer.alloc(1), claimed.size);
    return { kind: more === 0 ? "intact" : "grown", ...seen };
  } finally {
    await call<undefined>((cb) => {
      sftp.close(handle, (error) => {
        cb(error, undefined);
      });
    }).catch(() => undefined);
  }
}

/** The SHA-256 of the first `length` bytes; undefined when the file ends before them. */
async function prefixSha256(
  sftp: SFTPWrapper,
  handle: Buffer,
  length: number,
  answer: () => void,
): Promise<string | undefined> {
  const hash = createHash("sha256");
  const pieces = Math.ceil(length / READ_BYTES);
  const read = async (piece: number): Promise<Buffer | undefined> => {
    const start = piece * READ_BYTES;
    const buffer = Buffer.alloc(Math.min(READ_BYTES, length - start));
    // A server may answer a read with fewer bytes than asked: ask again for the rest.
    for (let filled = 0; filled < buffer.length;) {
      const got = await readAt(sftp, handle, buffer.subarray(filled), start + filled);
      answer();
      if (got === 0) return undefined; // the end of the file came first: it shrank
      filled += got;
    }
    return buffer;
  };
  const inFlight = new Map<number, Promise<Buffer | undefined>>();
  let next = 0;
  for (let piece = 0; piece < pieces; piece++) {
    while (next < pieces && next < piece + READS_IN_FLIGHT) {
      const started = read(next);
      started.catch(() => undefined); // awaited in order below
      inFlight.set(next++, started);
    }
    const buffer = await inFlight.get(piece);
    inFlight.delete(piece);
    if (buffer === undefined) {
      await Promise.allSettled(inFlight.values());
      return undefined;
    }
    hash.update(buffer);
  }
  return hash.digest("hex");
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
 * Appends to the local file `local` what the server's `remote` holds after its first `from` bytes, up
 * to the end of the file, and returns how many bytes that was. The download (fastGet) reads as many
 * bytes as the server says the file has; a server that says fewer than it holds (0, or a size before a
 * conversion) would otherwise have the rest of its invoices dropped without a word. One read when the
 * server told the truth.
 */
export async function readRest(
  sftp: SFTPWrapper,
  remote: string,
  local: string,
  from: number,
  answer: () => void = () => undefined,
): Promise<number> {
  const handle = await call<Buffer>((cb) => {
    sftp.open(remote, "r", cb);
  });
  const out = await open(local, "a");
  try {
    const buffer = Buffer.alloc(READ_BYTES);
    let at = from;
    for (;;) {
      const got = await readAt(sftp, handle, buffer, at);
      answer();
      if (got === 0) return at - from;
      await out.write(buffer, 0, got);
      at += got;
    }
  } finally {
    await out.close();
    await call<undefined>((cb) => {
      sftp.close(handle, (error) => {
        cb(error, undefined);
      });
    }).catch(() => undefined);
  }
}

function call<T>(start: (cb: (error: Error | undefined | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    start((error, value) => {
      if (error) reject(error);
      else resolve(value);
    });
  });
}
