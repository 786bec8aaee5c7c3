import { createHash } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { lstat, open, stat, type FileHandle } from "node:fs/promises";
import { FileChangedError, type ClaimedContent } from "./errors/file-changed-error.js";
import { onFileSystem } from "./file-system-waits.js";
import { shownName } from "../names/shown-text.js";
import { readOf, type ScanReads } from "./reads-under-way.js";

export type { ClaimedContent } from "./errors/file-changed-error.js";

/** What is claimed of a file that is never read (a symbolic link). */
export const EMPTY_CONTENT: ClaimedContent = { size: 0, sha256: createHash("sha256").digest("hex") };

/**
 * The length and sha256 of a claimed file, taken from one open handle: the bytes after `size` (a writer
 * still appending) are not part of what was claimed, and no reader of the batch ever reads them.
 */
export async function claimedContent(path: string): Promise<ClaimedContent> {
  return (await claimedBytes(path)).content;
}

/**
 * The same, with the bytes themselves when they fit in one read (a file of one invoice): ingest reads
 * them from memory, exactly the bytes measured, instead of opening the file twice more.
 */
export async function claimedBytes(
  path: string,
  signal?: AbortSignal,
  scan?: ScanReads,
): Promise<ClaimedBytes> {
  return reading(path, signal, scan, async (delivered) => measureOpen(await open(path, "r"), delivered));
}

/**
 * A read of a claimed file, on the pass's signal: a file system that never answers (a hung share) ends
 * it at the deadline, named (onFileSystem), not a guess; in a scan of `start`, also when it delivers no
 * byte while another scan falls due (ScanReads). The read itself goes on until the file system answers.
 */
function reading<T>(
  path: string,
  signal: AbortSignal | undefined,
  scan: ScanReads | undefined,
  run: (delivered: (bytes: number) => void) => Promise<T>,
): Promise<T> {
  const read = readOf(path, scan);
  const until =
    read.cut === undefined || signal === undefined
      ? (read.cut ?? signal)
      : AbortSignal.any([signal, read.cut]);
  return onFileSystem(`the drop folder's file ${shownName(path)}, read to measure its claim`, until, () =>
    read.during(run),
  );
}

/** What claimedBytes answers. */
export interface ClaimedBytes {
  readonly content: ClaimedContent;
  readonly bytes?: Uint8Array | undefined;
}

/**
 * claimedBytes of a file that may be a symbolic link: undefined when it is one, which is never followed,
 * not even to measure it. Opened with O_NOFOLLOW where there is one: no lstat before, and no moment
 * between a look and the open in which the file could become a link.
 */
export async function claimedBytesUnlessLink(
  path: string,
  signal?: AbortSignal,
  scan?: ScanReads,
): Promise<ClaimedBytes | undefined> {
  if (constants.O_NOFOLLOW === undefined)
    return (await lstat(path)).isSymbolicLink() ? undefined : claimedBytes(path, signal, scan);
  try {
    return await reading(path, signal, scan, async (delivered) =>
      measureOpen(await open(path, constants.O_RDONLY | constants.O_NOFOLLOW), delivered),
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") return undefined;
    throw error;
  }
}

async function measureOpen(handle: FileHandle, delivered: (bytes: number) => void): Promise<ClaimedBytes> {
  try {
    const { size } = await handle.stat();
    if (size > 0 && size <= ONE_READ_BYTES) {
      const bytes = await readStart(handle, size, delivered);
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      return { content: { size: bytes.length, sha256 }, bytes };
    }
    return { content: { size, sha256: await sha256Of(handle, size, delivered) } };
  } finally {
    await handle.close();
  }
}

/**
 * How a claimed file stands against its claim: `intact` (what was claimed), `grown` (the claimed bytes
 * unchanged, more after them) or `rewritten` (the claimed bytes changed, or fewer of them). A file of the
 * claimed length not modified after `unchangedSinceMs` is taken as intact without reading it, so that
 * checking every archived file at every pass costs a `stat` each.
 */
export type ClaimStanding =
  | { readonly kind: "intact" }
  | { readonly kind: "grown" | "rewritten"; readonly size: number; readonly mtimeMs: number };

export async function standingOf(
  path: string,
  claimed: ClaimedContent,
  unchangedSinceMs = Number.NEGATIVE_INFINITY,
  /** The file's `stat`, when the caller has just taken it (firstExistingStat). */
  stats?: Pick<Stats, "size" | "mtimeMs">,
): Promise<ClaimStanding> {
  // A stat alone answers for a file unchanged since: the usual case, for every archived file at every pass.
  const before = stats ?? (await stat(path));
  if (before.size === claimed.size && before.mtimeMs <= unchangedSinceMs) return { kind: "intact" };
  const handle = await open(path, "r");
  try {
    const { size, mtimeMs } = await handle.stat();
    if (size === claimed.size && mtimeMs <= unchangedSinceMs) return { kind: "intact" };
    const intact = size >= claimed.size && (await sha256Of(handle, claimed.size)) === claimed.sha256;
    if (intact && size === claimed.size) return { kind: "intact" };
    return { kind: intact ? "grown" : "rewritten", size, mtimeMs };
  } finally {
    await handle.close();
  }
}

/**
 * Whether a claimed file is still what was claimed: the same length and the same bytes. A file that grew
 * or was rewritten since its claim comes back as a FileChangedError saying what happens next.
 */
export async function findContentChange(
  path: string,
  file: string,
  claimed: ClaimedContent,
): Promise<FileChangedError | undefined> {
  const standing = await standingOf(path, claimed);
  return standing.kind === "intact"
    ? undefined
    : new FileChangedError(file, path, claimed, standing.size, standing.kind === "grown");
}

/**
 * findContentChange, with the claimed bytes themselves when they fit in one read (a file of one
 * invoice) and are still those claimed: a report reads them from memory, the file opened once.
 */
export async function checkClaimedBytes(
  path: string,
  file: string,
  claimed: ClaimedContent,
): Promise<{ readonly change?: FileChangedError | undefined; readonly bytes?: Uint8Array | undefined }> {
  if (claimed.size === 0 || claimed.size > ONE_READ_BYTES)
    return { change: await findContentChange(path, file, claimed) };
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    const bytes = await readStart(handle, claimed.size);
    // As standingOf: intact when the first `claimed.size` bytes hash as claimed, grown with more after them.
    const intact = createHash("sha256").update(bytes).digest("hex") === claimed.sha256;
    if (intact && size === claimed.size) return { bytes };
    const change = new FileChangedError(file, path, claimed, size, intact);
    return intact ? { change, bytes } : { change };
  } finally {
    await handle.close();
  }
}

/** Bytes hashed from one read instead of a stream: a file of one invoice, read at every check. */
const ONE_READ_BYTES = 16 * 1024;

/** The first `size` bytes (fewer if the file is shorter), with one read as a rule. */
async function readStart(
  handle: FileHandle,
  size: number,
  delivered: (bytes: number) => void = NOT_COUNTED,
): Promise<Buffer> {
  const bytes = Buffer.alloc(size);
  let read = 0;
  for (let got = -1; got !== 0 && read < size; read += got) {
    got = (await handle.read(bytes, read, size - read, read)).bytesRead;
    delivered(got);
  }
  return bytes.subarray(0, read);
}

/** The bytes a read delivers, told to whoever waits on its progress (ScanReads); here no one. */
const NOT_COUNTED = (): void => undefined;

async function sha256Of(
  handle: FileHandle,
  size: number,
  delivered: (bytes: number) => void = NOT_COUNTED,
): Promise<string> {
  const hash = createHash("sha256");
  if (size > 0 && size <= ONE_READ_BYTES) hash.update(await readStart(handle, size, delivered));
  else if (size > 0) {
    const stream = handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
    for await (const chunk of stream) {
      hash.update(chunk as Buffer);
      delivered((chunk as Buffer).length);
    }
  }
  return hash.digest("hex");
}
