import { createHash } from "node:crypto";
import { open, type FileHandle } from "node:fs/promises";
import { FileChangedError, type ClaimedContent } from "./errors/file-changed-error.js";

export type { ClaimedContent } from "./errors/file-changed-error.js";

/** What is claimed of a file that is never read (a symbolic link). */
export const EMPTY_CONTENT: ClaimedContent = { size: 0, sha256: createHash("sha256").digest("hex") };

/**
 * The length and sha256 of a claimed file, taken from one open handle: the bytes after `size` (a writer
 * still appending) are not part of what was claimed, and no reader of the batch ever reads them.
 */
export async function claimedContent(path: string): Promise<ClaimedContent> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    return { size, sha256: await sha256Of(handle, size) };
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
): Promise<ClaimStanding> {
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

async function sha256Of(handle: FileHandle, size: number): Promise<string> {
  const hash = createHash("sha256");
  if (size > 0) {
    const stream = handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
    for await (const chunk of stream) hash.update(chunk as Buffer);
  }
  return hash.digest("hex");
}
