import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RemoteSourceError } from "../../../src/ingest/sftp/errors/remote-source-error.js";
import { loadRemoteSources } from "../../../src/ingest/sftp/load-remote-sources.js";
import { parseSftpUrl } from "../../../src/ingest/sftp/remote-source-schema.js";
import { loadProfiles } from "../../../src/ingest/profiles/load-profiles.js";

const FINGERPRINT = "SHA256:" + "A".repeat(43);
let dir: string;
let key: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "relay-sftp-config-"));
  key = join(dir, "id_ed25519");
  await writeFile(key, "not read at load\n");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function load(text: string, env: NodeJS.ProcessEnv = {}) {
  await writeFile(join(dir, "sources.yaml"), text);
  return loadRemoteSources({ sourcesFile: undefined, dropDir: dir, env });
}

async function refusal(text: string, env: NodeJS.ProcessEnv = {}): Promise<RemoteSourceError> {
  const error: unknown = await load(text, env).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RemoteSourceError);
  return error as RemoteSourceError;
}

describe("SFTP sources in sources.yaml", () => {
  it("when a source is complete, then it is read with its defaults: move after the claim, no reports, every drop name", async () => {
    const [source] = await load(
      `sftp:\n  - name: acme\n    url: sftp://invoices@sftp.acme.example:2222/outgoing/\n    key_file: ${key}\n    host_key: ${FINGERPRINT}\n`,
    );
    expect(source).toEqual({
      name: "acme",
      host: "sftp.acme.example",
      port: 2222,
      user: "invoices",
      path: "/outgoing",
      auth: { kind: "key", keyFile: key, passphraseFile: undefined },
      hostKey: { kind: "fingerprint", fingerprint: FINGERPRINT },
      match: [],
      doneMarker: undefined,
      afterClaim: "move",
      reports: false,
    });
  });

  it("when a source sets timeout_seconds, then its connection waits that long for an answer; 0, 1.5 or 601 are refused naming the field and the line", async () => {
    const source = (timeout: string) =>
      `sftp:\n  - name: acme\n    url: sftp://u@h/x\n    key_file: ${key}\n    host_key: ${FINGERPRINT}\n    timeout_seconds: ${timeout}\n`;
    const [patient] = await load(source("120"));
    expect(patient?.unansweredMs).toBe(120_000);
    for (const wrong of ["0", "1.5", "601", "soon"])
      expect((await refusal(source(wrong))).message).toContain(
        "field timeout_seconds (line 6): must be a whole number of seconds from 1 to 600",
      );
  });

  it("when the file has profiles and sources, then the profiles are read as ever beside them", async () => {
    const text = `profiles:\n  - match: "sap-*.csv"\n    delimiter: ";"\nsftp:\n  - name: acme\n    url: sftp://u@h/x\n    key_file: ${key}\n    host_key: ${FINGERPRINT}\n`;
    expect(await load(text)).toHaveLength(1);
    expect(await loadProfiles(join(dir, "sources.yaml"))).toHaveLength(1);
  });

  it("when sources have many problems, then every one is listed at once, each naming the source, the field and the line", async () => {
    const error = await refusal(
      [
        "sftp:",
        "  - name: Acme Corp",
        "    url: sftp://u:hunter2@h/x",
        `    key_file: ${key}`,
        `    password_file: ${join(dir, "missing")}`,
        "  - name: beta",
        "    url: ftp://h/x",
        `    host_key: SHA256:short`,
        "    after_claim: keep",
        "    colour: blue",
        "  - name: gamma",
        "    url: sftp://u@h/x",
        "    password_env: GAMMA_PASSWORD",
        `    host_key: ${FINGERPRINT}`,
        "",
      ].join("\n"),
    );
    const text = error.message;
    expect(text).toContain(
      "sources.yaml, sftp source 1 (Acme Corp), field name (line 2): must be a short name",
    );
    expect(text).toContain(
      "field url (line 3): holds a password: a password is never written in the address",
    );
    expect(text).not.toContain("hunter2");
    expect(text).toContain("sftp source 2 (beta), field url (line 7): must start with sftp://");
    expect(text).toContain("field host_key (line 8): must be a fingerprint as ssh-keygen -lf prints it");
    expect(text).toContain("field after_claim (line 9): must be move");
    expect(text).toContain("field colour (line 10): is not a field of an SFTP source");
    expect(text).toContain(
      "sftp source 3 (gamma), field password_env (line 13): names GAMMA_PASSWORD, which is not set",
    );
    expect(error.problems.length).toBeGreaterThanOrEqual(6);
  });

  it("when no host key is pinned, then the source is refused with how to find its fingerprint", async () => {
    const error = await refusal(`sftp:\n  - name: acme\n    url: sftp://u@h/x\n    key_file: ${key}\n`);
    expect(error.message).toContain("field host_key");
    expect(error.message).toContain("pin the server's host key");
  });

  it("when a key file cannot be read or two ways to log in are given, then each is said", async () => {
    const missing = join(dir, "nope");
    const error = await refusal(
      `sftp:\n  - name: a\n    url: sftp://u@h/x\n    key_file: ${missing}\n    host_key: ${FINGERPRINT}\n  - name: b\n    url: sftp://u@h/x\n    key_file: ${key}\n    password_env: X\n    host_key: ${FINGERPRINT}\n`,
    );
    expect(error.message).toContain(`field key_file (line 4): names ${missing}, which cannot be read`);
    expect(error.message).toContain("give only one of key_file, password_file and password_env");
  });

  it("when known_hosts or key_file names a folder, then each is said to be a folder, not a file", async () => {
    const error = await refusal(
      `sftp:\n  - name: a\n    url: sftp://u@h/x\n    key_file: ${dir}\n    known_hosts: ${dir}\n`,
    );
    expect(error.message).toContain(`field key_file (line 4): names ${dir}, a folder; name the file itself`);
    expect(error.message).toContain(
      `field known_hosts (line 5): names ${dir}, a folder; name the file itself`,
    );
  });

  it("when two sources share a name, then the second is refused", async () => {
    const one = `  - name: acme\n    url: sftp://u@h/x\n    key_file: ${key}\n    host_key: ${FINGERPRINT}\n`;
    const error = await refusal(`sftp:\n${one}${one}`);
    expect(error.message).toContain("acme names an earlier source too");
  });
});

describe("an sftp:// address", () => {
  it("when it has no port, then port 22 is meant; an IPv6 host loses its brackets", () => {
    expect(parseSftpUrl("sftp://me@[::1]/in")).toEqual({ host: "::1", port: 22, user: "me", path: "/in" });
    expect(parseSftpUrl("sftp://me@h")).toMatchObject({ path: "/" });
    expect(parseSftpUrl("sftp://h/x")).toBe("names no user; write sftp://user@host/path");
  });

  it("when its user or path holds a % not followed by two hex digits, then it is refused saying how to write a %, not with the decoder's words", () => {
    for (const url of ["sftp://me@h/in%zzbox", "sftp://m%zze@h/in", "sftp://me@h/100%"])
      expect(parseSftpUrl(url), url).toBe(
        "holds a % that starts no %XX escape; write a % in the user or path as %25",
      );
    expect(parseSftpUrl("sftp://me@h/in%20box%25")).toMatchObject({ path: "/in box%" });
  });
});
