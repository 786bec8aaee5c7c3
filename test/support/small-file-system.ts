import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Mounts a file system of `bytes` on the folder `dir` (tmpfs): one that fills up as a real disk does, a
 * write taking what room is left and the next failing with ENOSPC. Mounting needs root, as the tests run
 * in CI. Returns its unmount, which frees the room (what it held is gone with it).
 */
export async function mountSmallFileSystem(dir: string, bytes: number): Promise<() => Promise<void>> {
  try {
    await run("mount", ["-t", "tmpfs", "-o", `size=${bytes}`, "tmpfs", dir]);
  } catch (error) {
    throw new Error(`mounting a ${bytes}-byte tmpfs on ${dir} needs root (as CI runs): ${String(error)}`, {
      cause: error,
    });
  }
  return async () => {
    await run("umount", [dir]);
  };
}
