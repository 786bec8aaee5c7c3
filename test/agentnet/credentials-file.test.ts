import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadDeveloperKey, reserveCredentialsFile } from "../../src/agentnet/credentials-file.js";
import type { CredentialsRecord } from "../../src/agentnet/credentials-record.js";
import { CredentialsFileError } from "../../src/agentnet/errors/credentials-file-error.js";
import { CredentialsFileExistsError } from "../../src/agentnet/errors/credentials-file-exists-error.js";
import { WrongCredentialKindError } from "../../src/config/errors/wrong-credential-kind-error.js";
import { silentLogger } from "../../src/log/logger.js";

const DEV_KEY = "amn_dev_9fKq2LmX7vB0zR4tY8wE1uI3";
const logger = silentLogger();
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentnet-creds-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function record(overrides: Partial<CredentialsRecord> = {}): CredentialsRecord {
  return {
    version: 1,
    api_url: "https://agents.example.com/",
    developer_id: "dev-acct-42",
    developer_name: "Acme relay",
    email: "ops@example.com",
    key_prefix: "amn_dev_",
    api_key: DEV_KEY,
    created_at: "2026-11-21T00:00:00.000Z",
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
  }
  throw new Error("expected a rejection");
}

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe("reserveCredentialsFile", () => {
  it("when the folder does not exist, then it is created 0700 and the file is written 0600 with the record", async () => {
    const path = join(dir, "cfg", "invoice-relay", "agentnet-credentials.json");
    const pending = await reserveCredentialsFile(path, { force: false, logger });
    await pending.commit(record());
    expect(await modeOf(path)).toBe(0o600);
    expect(await modeOf(join(dir, "cfg", "invoice-relay"))).toBe(0o700);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual(record());
    expect(await readdir(join(dir, "cfg", "invoice-relay"))).toEqual(["agentnet-credentials.json"]);
  });

  it("when reserved, then the temp file already exists with mode 0600 before any key is known", async () => {
    const pending = await reserveCredentialsFile(join(dir, "c.json"), { force: false, logger });
    expect(await modeOf(pending.tempPath)).toBe(0o600);
    await pending.abort();
    expect(await readdir(dir)).toEqual([]);
  });

  it("when a key is already stored, then it is refused without --force and the message names it but not the key", async () => {
    const path = join(dir, "c.json");
    await writeFile(path, JSON.stringify(record()), { mode: 0o600 });
    const error = await rejection(reserveCredentialsFile(path, { force: false, logger }));
    expect(error).toBeInstanceOf(CredentialsFileExistsError);
    expect(error.message).toContain("amn_dev_… of developer_id dev-acct-42");
    expect(error.message).toContain("--force");
    expect(error.message).not.toContain(DEV_KEY);
    expect(await readdir(dir)).toEqual(["c.json"]);
  });

  it("when the file exists but is not a credentials file, then it is not replaced without --force either", async () => {
    const path = join(dir, "c.json");
    await writeFile(path, "something else");
    await expect(reserveCredentialsFile(path, { force: false, logger })).rejects.toThrow(
      "not an invoice-relay",
    );
    expect(await readFile(path, "utf8")).toBe("something else");
  });

  it("when --force is given, then the old file is replaced atomically and ends up 0600", async () => {
    const path = join(dir, "c.json");
    await writeFile(path, JSON.stringify(record({ developer_id: "old" })), { mode: 0o644 });
    const pending = await reserveCredentialsFile(path, { force: true, logger });
    await pending.commit(record({ developer_id: "new" }));
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ developer_id: "new" });
    expect(await modeOf(path)).toBe(0o600);
  });

  it("when another run stores a key while ours was requested, then ours is kept in the temp file and theirs stays", async () => {
    const path = join(dir, "c.json");
    const pending = await reserveCredentialsFile(path, { force: false, logger });
    await writeFile(path, JSON.stringify(record({ developer_id: "theirs" })), { mode: 0o600 });
    const error = await rejection(pending.commit(record({ developer_id: "ours" })));
    expect(error).toBeInstanceOf(CredentialsFileError);
    expect(error.message).toContain(pending.tempPath);
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ developer_id: "theirs" });
    expect(JSON.parse(await readFile(pending.tempPath, "utf8"))).toMatchObject({ developer_id: "ours" });
  });

  it("when the path is a folder, then it is refused before anything is requested", async () => {
    await expect(reserveCredentialsFile(dir, { force: true, logger })).rejects.toThrow("is a folder");
  });

  it("when the folder cannot be created, then it fails before a key is requested", async () => {
    const blocker = join(dir, "not-a-folder");
    await writeFile(blocker, "");
    const error = await rejection(
      reserveCredentialsFile(join(blocker, "sub", "c.json"), { force: false, logger }),
    );
    expect(error).toMatchObject({ code: "AGENTNET_CREDENTIALS_FILE" });
    expect(error.message).toContain("Nothing was requested");
  });
});

describe("loadDeveloperKey", () => {
  it("when the file holds a developer key, then it is read back as a DeveloperKey", async () => {
    const path = join(dir, "c.json");
    await writeFile(path, JSON.stringify(record()), { mode: 0o600 });
    expect(await loadDeveloperKey(path)).toEqual({
      developerKey: DEV_KEY,
      developerId: "dev-acct-42",
      apiUrl: "https://agents.example.com/",
    });
  });

  it("when the file holds the invoice service's key, then the agent-network side refuses it", async () => {
    const path = join(dir, "c.json");
    await writeFile(path, JSON.stringify(record({ api_key: "sk_live_4eC39HqLyjWDarjtT1zdp7dc" })), {
      mode: 0o600,
    });
    const error = await rejection(loadDeveloperKey(path));
    expect(error).toBeInstanceOf(WrongCredentialKindError);
    expect(error.message).not.toContain("sk_live_4eC39");
  });

  it.skipIf(process.platform === "win32")(
    "when others can read the file, then it is refused with the chmod fix",
    async () => {
      const path = join(dir, "c.json");
      await writeFile(path, JSON.stringify(record()));
      await chmod(path, 0o644);
      await expect(loadDeveloperKey(path)).rejects.toThrow(`chmod 600 ${path}`);
    },
  );

  it("when there is no file, then the message says to register first", async () => {
    await expect(loadDeveloperKey(join(dir, "missing.json"))).rejects.toThrow(
      "invoice-relay agentnet register",
    );
  });
});
