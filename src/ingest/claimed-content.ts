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
 * Whether a claimed file is still what was claimed: the same length and the same bytes. A file that grew
 * or was rewritten since its claim comes back as a FileChangedError saying what to do.
 */
export async function findContentChange(
  path: string,
  file: string,
  claimed: ClaimedContent,
): Promise<FileChangedError | undefined> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    const intact = size >= claimed.size && (await sha256Of(handle, claimed.size)) === claimed.sha256;
    return intact && size === claimed.size
      ? undefined
      : new FileChangedError(file, path, claimed, size, intact);
  } finally {
    await handle.close();
  }
}

async function sha256Of(handle: FileHandle, size: number): Promise<string> {
  const hash = createHash("sha256");
  if (size > 0) {
    const stream = handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
    for await (const chunk of stream) hash.update(chunk as Buffer);
  }
  return hash.digest("hex");
}
