import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { credentials } from "../../../src/ingest/sftp/credentials.js";
import { acceptedKeys } from "../../../src/ingest/sftp/host-key.js";
import type { RemoteAuth, RemoteSource } from "../../../src/ingest/sftp/remote-source.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";

const cleanups = cleanupsAfterEach();

function sourceWith(auth: RemoteAuth): RemoteSource {
  return {
    name: "acme",
    host: "127.0.0.1",
    port: 22,
    user: "partner",
    path: "/inbox",
    auth,
    hostKey: { kind: "fingerprint", fingerprint: "SHA256:x" },
    match: [],
    afterClaim: "move",
    reports: false,
  };
}

/** The message `reading` failed with, or "read" or "still reading" after 2 s. */
function outcomeOf(reading: Promise<unknown>): Promise<string> {
  return Promise.race([
    reading.then(
      () => "read",
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    ),
    new Promise<string>((resolve) => {
      setTimeout(() => {
        resolve("still reading");
      }, 2_000);
    }),
  ]);
}

describe("an SFTP source's key, password and known_hosts files", () => {
  it("when key_file, passphrase_file, password_file or known_hosts names a FIFO or a file far larger than any key, then it is refused at once as not a regular file or too large, never read", async () => {
    const dir = await mkdtemp(join(tmpdir(), "relay-credential-files-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const huge = join(dir, "huge");
    await writeFile(huge, Buffer.alloc(2 * 1024 * 1024, 0x61));
    const key = join(dir, "key");
    await writeFile(key, "not a key\n");

    for (const [auth, field, problem] of [
      [{ kind: "password-file", passwordFile: fifo }, "password_file", "is not a regular file"],
      [{ kind: "key", keyFile: fifo }, "key_file", "is not a regular file"],
      [{ kind: "key", keyFile: key, passphraseFile: fifo }, "passphrase_file", "is not a regular file"],
      [{ kind: "password-file", passwordFile: huge }, "password_file", "is larger than"],
      [{ kind: "key", keyFile: "/dev/zero" }, "key_file", "is not a regular file"],
    ] as const) {
      const outcome = await outcomeOf(credentials(sourceWith(auth)));
      expect(outcome, field).toContain(`SFTP source acme: ${field} `);
      expect(outcome, field).toContain(problem);
    }
    const pinned = {
      ...sourceWith({ kind: "key", keyFile: key }),
      hostKey: { kind: "known-hosts", file: fifo },
    } as const;
    const outcome = await outcomeOf(acceptedKeys(pinned));
    expect(outcome).toContain(`SFTP source acme: known_hosts ${fifo} is not a regular file`);
  });
});
