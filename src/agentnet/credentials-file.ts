import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import {
  chmod,
  link,
  lstat,
  mkdir,
  open,
  readFile,
  rename,
  stat,
  unlink,
  type FileHandle,
} from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { parseDeveloperKey, type DeveloperKey } from "../config/credentials.js";
import type { Logger } from "../log/logger.js";
import { readCredentialsRecord, type CredentialsRecord } from "./credentials-record.js";
import { CredentialsFileError } from "./errors/credentials-file-error.js";
import { CredentialsFileExistsError } from "./errors/credentials-file-exists-error.js";

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/**
 * A credentials file being written: the temp file (mode 0600, next to the target) is created before the
 * key is requested, so a folder that cannot be written fails before the service issues a key it shows
 * only once.
 */
export interface PendingCredentialsFile {
  readonly path: string;
  readonly tempPath: string;
  /** Writes the record to the temp file, syncs it and moves it into place. */
  commit(record: CredentialsRecord): Promise<void>;
  /** Removes the temp file; for when no key was obtained. */
  abort(): Promise<void>;
}

export interface ReserveOptions {
  /** Replace an existing file (and the key in it, which the service will not show again). */
  readonly force: boolean;
  readonly logger: Logger;
}

export async function reserveCredentialsFile(
  target: string,
  options: ReserveOptions,
): Promise<PendingCredentialsFile> {
  const path = resolve(target);
  await refuseExisting(path, options.force);
  const dir = dirname(path);
  await prepareFolder(dir, options.logger);
  const tempPath = join(dir, `.${basename(path)}.${randomUUID()}.tmp`);
  let handle: FileHandle;
  try {
    handle = await open(tempPath, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, FILE_MODE);
    // The umask may only narrow the mode; make it exactly 0600 so the owner can read the key back.
    await handle.chmod(FILE_MODE);
  } catch (error) {
    throw new CredentialsFileError(
      path,
      `cannot create a file in ${dir} (${describe(error)}). Nothing was requested.`,
      {
        cause: error,
      },
    );
  }
  const discard = async (): Promise<void> => {
    await handle.close().catch(() => undefined);
    await unlink(tempPath).catch(() => undefined);
  };
  return {
    path,
    tempPath,
    abort: discard,
    commit: async (record) => {
      try {
        await handle.writeFile(`${JSON.stringify(record, null, 2)}\n`, "utf8");
        await handle.sync();
        await handle.close();
      } catch (error) {
        await discard();
        throw new CredentialsFileError(
          path,
          `the developer key was issued but could not be written (${describe(error)}); it is lost. ` +
            "Free the disk or fix the folder, then run the command again with --force to get a new key.",
          { cause: error },
        );
      }
      await moveIntoPlace(tempPath, path, options.force);
      await syncFolder(dir);
    },
  };
}

/** Without --force nothing that exists at the path is replaced, whatever it holds. */
async function refuseExisting(path: string, force: boolean): Promise<void> {
  const info = await lstat(path).catch((error: unknown) => {
    if (isCode(error, "ENOENT")) return undefined;
    throw new CredentialsFileError(path, `cannot be checked (${describe(error)}). Nothing was requested.`, {
      cause: error,
    });
  });
  if (info === undefined) return;
  if (info.isDirectory()) {
    throw new CredentialsFileError(
      path,
      "is a folder; pass --credentials with a file path. Nothing was requested.",
    );
  }
  if (force) return;
  const record = await readFile(path, "utf8").then(readCredentialsRecord, () => undefined);
  const holds =
    record === undefined
      ? "not an invoice-relay credentials file, or unreadable"
      : `developer key ${record.key_prefix}… of developer_id ${record.developer_id}`;
  throw new CredentialsFileExistsError(path, holds);
}

async function prepareFolder(dir: string, logger: Logger): Promise<void> {
  try {
    const created = await mkdir(dir, { recursive: true, mode: DIR_MODE });
    if (created !== undefined) {
      await chmod(dir, DIR_MODE);
      return;
    }
    const { mode } = await stat(dir);
    // Another user who can write the folder could swap the file; the key itself stays 0600 either way.
    if ((mode & 0o022) !== 0) {
      logger.warn(
        { dir, mode: (mode & 0o777).toString(8) },
        "the credentials folder is writable by other users",
      );
    }
  } catch (error) {
    throw new CredentialsFileError(
      dir,
      `cannot create this folder (${describe(error)}). Nothing was requested.`,
      {
        cause: error,
      },
    );
  }
}

/**
 * With --force: rename over the target. Without: link, which fails if the target appeared meanwhile
 * (another run), so a key stored by someone else is never replaced; the new key then stays in the
 * temp file and the message says where. Filesystems without hard links fall back to a checked rename.
 */
async function moveIntoPlace(tempPath: string, path: string, force: boolean): Promise<void> {
  const keptAt = `the new developer key is kept in ${tempPath} (mode 0600): move it into place or delete it`;
  try {
    if (force) {
      await rename(tempPath, path);
      return;
    }
    try {
      await link(tempPath, path);
      await unlink(tempPath).catch(() => undefined);
      return;
    } catch (error) {
      if (isCode(error, "EEXIST"))
        throw new CredentialsFileError(path, `was created by someone else meanwhile; ${keptAt}.`);
      const exists = await lstat(path).then(
        () => true,
        () => false,
      );
      if (exists) throw new CredentialsFileError(path, `was created by someone else meanwhile; ${keptAt}.`);
      await rename(tempPath, path);
    }
  } catch (error) {
    if (error instanceof CredentialsFileError) throw error;
    throw new CredentialsFileError(path, `cannot be put in place (${describe(error)}); ${keptAt}.`, {
      cause: error,
    });
  }
}

/** Makes the rename itself durable; some platforms cannot open a folder, which is harmless. */
async function syncFolder(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY).catch(() => undefined);
  if (handle === undefined) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

export interface StoredDeveloperKey {
  readonly developerKey: DeveloperKey;
  readonly developerId: string;
  readonly apiUrl: string;
}

/**
 * Reads the developer key back for the agent-network client. Refuses a file others can read (like ssh
 * does) and anything in it that is not a developer key, the invoice service's key above all.
 */
export async function loadDeveloperKey(target: string): Promise<StoredDeveloperKey> {
  const path = resolve(target);
  let text: string;
  try {
    if (process.platform !== "win32" && ((await stat(path)).mode & 0o077) !== 0) {
      throw new CredentialsFileError(
        path,
        `can be read by other users; run \`chmod 600 ${path}\` and try again.`,
      );
    }
    text = await readFile(path, "utf8");
  } catch (error) {
    if (error instanceof CredentialsFileError) throw error;
    const fix = isCode(error, "ENOENT") ? "run `invoice-relay agentnet register` first" : describe(error);
    throw new CredentialsFileError(path, `cannot be read: ${fix}.`, { cause: error });
  }
  const record = readCredentialsRecord(text);
  if (record === undefined) {
    throw new CredentialsFileError(
      path,
      "is not an invoice-relay credentials file; run `invoice-relay agentnet register`.",
    );
  }
  return {
    developerKey: parseDeveloperKey(record.api_key, `api_key in ${path}`),
    developerId: record.developer_id,
    apiUrl: record.api_url,
  };
}

function isCode(error: unknown, code: string): boolean {
  return error instanceof Error && (error as Error & { code?: unknown }).code === code;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
