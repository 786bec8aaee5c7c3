import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../src/dev/free-port.js";
import type { HostKeyPin, RemoteSource } from "../../../src/ingest/sftp/remote-source.js";
import { openSftpSession } from "../../../src/ingest/sftp/session.js";
import { startSftpServer, type SftpServer } from "../../support/sftp-server.js";
import { tempDropDir } from "../../support/drop.js";

let server: SftpServer;
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  server = await startSftpServer({ rsa: true });
  ({ dir, cleanup } = await tempDropDir());
});
afterAll(async () => {
  await server.close();
  await cleanup();
});

function source(hostKey: HostKeyPin, port = server.port): RemoteSource {
  return {
    name: "acme",
    host: "127.0.0.1",
    port,
    user: server.user,
    path: server.root,
    auth: { kind: "key", keyFile: server.clientKeyFile },
    hostKey,
    match: [],
    afterClaim: "move",
    reports: false,
  };
}

async function knownHosts(name: string, lines: readonly string[]): Promise<HostKeyPin> {
  const file = join(dir, name);
  await writeFile(file, `${lines.join("\n")}\n`);
  return { kind: "known-hosts", file };
}

/** Opens a session, lists the folder and closes it: the server was trusted and the login worked. */
async function opens(pin: HostKeyPin): Promise<boolean> {
  const session = await openSftpSession(source(pin));
  try {
    await session.list(server.root);
    return true;
  } finally {
    await session.close();
  }
}

function refusal(pin: HostKeyPin, port?: number): Promise<string> {
  return openSftpSession(source(pin, port)).then(
    async (session) => {
      await session.close();
      return "connected";
    },
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
}

describe("trusting a server with several host keys", () => {
  it("when the server has ed25519 and RSA keys and host_key pins the RSA one, then the session opens", async () => {
    expect(await opens({ kind: "fingerprint", fingerprint: await server.hostFingerprint("rsa") })).toBe(true);
  });

  it("when known_hosts holds only the server's RSA line, then the session opens, as OpenSSH's sftp does", async () => {
    expect(await opens(await knownHosts("rsa-only", [await server.knownHostsLine("rsa")]))).toBe(true);
  });

  it("when the pinned fingerprint is none of the server's keys, then the refusal names each key it offered", async () => {
    const pinned = "SHA256:QeQ1hE3mF0p0h6sWl5uE2wV1c1n0o8o6m0ZQx4f1y9s";
    const message = await refusal({ kind: "fingerprint", fingerprint: pinned });
    expect(message).toContain(`but ${pinned} is pinned`);
    expect(message).toContain(await server.hostFingerprint("ed25519"));
    expect(message).toContain(await server.hostFingerprint("rsa"));
  });
});

describe("known_hosts markers", () => {
  it("when the offered key is marked @revoked, then the connection is refused as a revoked key, even where another line pins it", async () => {
    const line = await server.knownHostsLine("ed25519");
    for (const revoked of [`@revoked ${line}`, `@revoked * ${line.split(" ").slice(1).join(" ")}`]) {
      const pin = await knownHosts("revoked", [line, revoked, await server.knownHostsLine("rsa")]);
      const message = await refusal(pin);
      expect(message).toContain("REVOKED HOST KEY");
      expect(message).toContain(await server.hostFingerprint("ed25519"));
      expect(message).toContain("line 2");
    }
  });

  it("when known_hosts names the server only by a @cert-authority line, then the connection is refused saying host certificates are not supported", async () => {
    const key = (await server.knownHostsLine("ed25519")).split(" ").slice(1).join(" ");
    const message = await refusal(await knownHosts("ca", [`@cert-authority * ${key}`]));
    expect(message).toContain("@cert-authority");
    expect(message).toMatch(/not supported/);
    expect(message).toContain("pin the server's own host key");
  });

  it("when known_hosts names a folder, then the error says so", async () => {
    const folder = join(dir, "known_hosts.d");
    await mkdir(folder);
    const message = await refusal({ kind: "known-hosts", file: folder });
    expect(message).toContain(`known_hosts ${folder} is a folder`);
    expect(message).not.toContain("EISDIR");
  });
});

describe("a server that cannot be reached", () => {
  it("when nothing listens at the address, then the error says so in an operator's words, no library's", async () => {
    const port = await freePort();
    const message = await refusal({ kind: "fingerprint", fingerprint: await server.hostFingerprint() }, port);
    expect(message).toContain(`nothing listens at 127.0.0.1:${port}`);
    expect(message).toContain("check the url and the network");
    expect(message).not.toMatch(/ECONNREFUSED|getConnection|connect\b/);
  });
});
