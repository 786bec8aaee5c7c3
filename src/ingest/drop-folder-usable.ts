import { access, constants, mkdir, stat } from "node:fs/promises";
import { basename } from "node:path";
import type { DropFolder } from "./drop-folder.js";
import { DropFolderUnusableError } from "./errors/drop-folder-unusable-error.js";

const NEVER_CREATED =
  "the relay creates its subfolders, never the drop folder itself: mount the share or create the folder, " +
  "or set DROP_DIR (--drop-dir) to the folder files are dropped in";

const GIVE_ACCESS =
  "give the user invoice-relay runs as read and write access to it, or set DROP_DIR to a folder on a " +
  "file system that holds files";

/**
 * Checks that the drop folder can be used, and creates the relay's subfolders in it (never the folder
 * itself): it exists, is a folder, and this process may list it, rename files out of it and write into
 * each subfolder. Throws DropFolderUnusableError naming the path, what is wrong and what to do. Each
 * subfolder is made on its own, never recursively: on a file system that refuses (/proc, /sys) a
 * recursive mkdir retries its parent for ever.
 */
export async function checkDropFolder(folder: DropFolder): Promise<void> {
  const root = folder.root;
  try {
    const info = await stat(root);
    if (!info.isDirectory())
      throw new DropFolderUnusableError(
        root,
        "is not a folder (a file is in its place)",
        "set DROP_DIR to the folder files are dropped in",
      );
  } catch (error) {
    if (error instanceof DropFolderUnusableError) throw error;
    throw unusable(root, error, "does not exist", NEVER_CREATED);
  }
  await accessible(root, root);
  for (const dir of [folder.processing, folder.archive, folder.rejected, folder.reports]) {
    try {
      await mkdir(dir);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST")
        throw unusable(root, error, `cannot hold its subfolder ${basename(dir)}`);
      if (
        !(await stat(dir).then(
          (s) => s.isDirectory(),
          () => false,
        ))
      )
        throw new DropFolderUnusableError(
          root,
          `holds a file named ${basename(dir)} where the relay keeps its subfolder`,
          "move that file away",
        );
    }
    await accessible(root, dir);
  }
}

/**
 * What a file system step on the drop folder that failed means to the user: if the folder can no longer
 * be used (removed, unmounted or made read-only since it was checked), the error checkDropFolder gives
 * at start, naming the path and what to do; otherwise the step's own error. One check, at start and
 * whenever a step fails, so a folder gone at any moment is said the same way.
 */
export async function folderProblemOf(folder: DropFolder, error: unknown): Promise<unknown> {
  if (errnoOf(error) === undefined) return error;
  try {
    await checkDropFolder(folder);
  } catch (problem) {
    if (problem instanceof DropFolderUnusableError) return problem;
  }
  return error;
}

/** Read, write and enter: a claim renames a file out of the folder into processing/. */
async function accessible(root: string, dir: string): Promise<void> {
  try {
    await access(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    const what =
      dir === root ? "cannot be written to" : `cannot be written to in its subfolder ${basename(dir)}`;
    throw unusable(root, error, what);
  }
}

function unusable(
  root: string,
  error: unknown,
  missing: string,
  remedy = GIVE_ACCESS,
): DropFolderUnusableError {
  const code = errnoOf(error);
  const problem =
    code === "ENOENT"
      ? missing
      : code === "ENOTDIR"
        ? "is not a folder (a part of its path is a file)"
        : code === "EACCES" || code === "EPERM"
          ? `${missing === "does not exist" ? "cannot be reached" : missing} (permission denied)`
          : code === "EROFS"
            ? `${missing} (a read-only file system)`
            : `${missing} (${code ?? "an unknown error"})`;
  const fix = code === "ENOENT" ? remedy : code === "ENOTDIR" ? "set DROP_DIR to a folder" : GIVE_ACCESS;
  return new DropFolderUnusableError(root, problem, fix, { cause: error });
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
