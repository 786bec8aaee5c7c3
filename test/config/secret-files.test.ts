import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { liveSecret, type SecretFileEvents } from "../../src/config/live-secret.js";
import { loadConfig } from "../../src/config/load.js";
import { ioProblem, MAX_SECRET_FILE_BYTES } from "../../src/config/secret-file.js";
import { SETTINGS } from "../../src/config/settings.js";
import { processSecrets } from "../../src/cli/runtime.js";
import { problemsOf } from "./problems-of.js";

const KEY = "irs_live_file_key_7c1d0e9a2b";
const NEW_KEY = "irs_live_rotated_key_5f3e8d";
const TOKEN = "console-token-from-a-file-0123";
const base = { INVOICE_API_URL: "https://invoices.example.com" };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "secret-files-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function secretFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text, { mode: 0o600 });
  return path;
}

/** A secret written as a rotation writes it: a temporary file renamed over the old one. */
async function rotate(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

/** The one problem of `env`; fails the test if there is not exactly one. */
function problem(env: Record<string, string>): string {
  const problems = problemsOf({ ...base, ...env });
  expect(problems).toHaveLength(1);
  return problems[0] ?? "";
}

function recorder(): SecretFileEvents & { messages: string[]; changes: number } {
  const seen = {
    messages: [] as string[],
    changes: 0,
    unusable: (message: string) => {
      seen.messages.push(message);
    },
    changed: () => {
      seen.changes++;
    },
  };
  return seen;
}

describe("secret settings given as files (X_FILE)", () => {
  it("when every secret setting is given as a file, then each value is read from its file, its surrounding line break dropped", async () => {
    const config = loadConfig({
      ...base,
      INVOICE_API_KEY_FILE: await secretFile("key", `${KEY}\n`),
      CONSOLE_TOKEN_FILE: await secretFile("token", `${TOKEN}\r\n`),
      REDIS_URL_FILE: await secretFile("redis", "redis://:s3cret-pass@10.0.0.5:6379\n"),
      RESULTS_DATABASE_URL_FILE: await secretFile("db", "postgres://relay:pw-1@db.internal/relay"),
      NOTIFY_WEBHOOK_URL_FILE: await secretFile("hook", "https://hooks.slack.com/services/T0/B0/abc\n"),
    });
    expect(config).toMatchObject({
      invoiceApiKey: KEY,
      consoleToken: TOKEN,
      redisUrl: "redis://:s3cret-pass@10.0.0.5:6379",
      resultsDatabaseUrl: "postgres://relay:pw-1@db.internal/relay",
      notifyWebhookUrl: "https://hooks.slack.com/services/T0/B0/abc",
    });
    expect(Object.keys(config.secretFiles).sort()).toEqual([
      "consoleToken",
      "invoiceApiKey",
      "notifyWebhookUrl",
      "redisUrl",
      "resultsDatabaseUrl",
    ]);
  });

  it("when the settings that may be files are listed, then they are every secret and the Redis settings that hold a password", () => {
    const settings: { env: string; file?: boolean; secret?: boolean }[] = Object.values(SETTINGS);
    const fileable = settings.filter((s) => s.file === true).map((s) => s.env);
    const secrets = settings.filter((s) => s.secret === true).map((s) => s.env);
    expect(fileable).toEqual(expect.arrayContaining(secrets));
    expect(fileable.filter((env) => !secrets.includes(env)).sort()).toEqual([
      "REDIS_CLUSTER_NODES",
      "REDIS_URL",
    ]);
  });

  it("when a setting and its file are both set, then one message names both", async () => {
    const text = problem({ INVOICE_API_KEY: KEY, INVOICE_API_KEY_FILE: await secretFile("key", KEY) });
    expect(text).toMatch(/^INVOICE_API_KEY and INVOICE_API_KEY_FILE are both set: set only one/);
    expect(text).not.toContain(KEY);
  });

  it("when the file is missing, a directory, empty, not a regular file or too large, then the message names the variable, the path and the fix, never a value", async () => {
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const cases: [string, RegExp][] = [
      [join(dir, "absent"), /does not exist: mount the secret at that path, or point INVOICE_API_KEY_FILE/],
      [join(dir, "absent", "deeper"), /does not exist/],
      [dir, /is a directory: point INVOICE_API_KEY_FILE at the file in it/],
      [await secretFile("empty", " \n"), /is empty: write the secret into it/],
      [fifo, /is not a regular file/],
      [await secretFile("big", "x".repeat(MAX_SECRET_FILE_BYTES + 1)), /is larger than 64 KiB/],
    ];
    for (const [path, expected] of cases) {
      const text = problem({ INVOICE_API_KEY_FILE: path });
      expect(text, path).toMatch(new RegExp(`^INVOICE_API_KEY_FILE ${path} `));
      expect(text, path).toMatch(expected);
    }
  });

  it("when reading the file is refused (permission denied), then the message says to give read access", () => {
    expect(ioProblem(Object.assign(new Error("denied"), { code: "EACCES" }), "X_FILE")).toMatch(
      /permission denied\): give the user invoice-relay runs as read access/,
    );
    expect(ioProblem(Object.assign(new Error("loop"), { code: "ELOOP" }), "X_FILE")).toMatch(
      /cannot be read \(ELOOP\): check the path/,
    );
  });

  it("when a file holds a value the setting refuses, then the same checks as the variable's apply and the secret is not quoted", async () => {
    const agentKey = "amn_dev_9fKq2LxY7pR4tZ1wQ8";
    const keyProblem = problem({ INVOICE_API_KEY_FILE: await secretFile("key", agentKey) });
    expect(keyProblem).toMatch(/^INVOICE_API_KEY_FILE \S+: the value .*agent memory network developer key/);
    expect(keyProblem).not.toContain(agentKey.slice(4));
    const tokenProblem = problem({ CONSOLE_TOKEN_FILE: await secretFile("token", "short-token") });
    expect(tokenProblem).toMatch(/^CONSOLE_TOKEN_FILE \S+: the value must be at least 16 characters/);
    expect(tokenProblem).not.toContain("short-token");
    const redisProblem = problem({ REDIS_URL_FILE: await secretFile("redis", "http://:pw-9@h:6379") });
    expect(redisProblem).toMatch(/must be a redis:\/\/ or rediss:\/\/ URL \(got "http:\/\/:\*\*\*@h:6379"\)/);
  });

  it("when a submitting command has neither the key nor its file, then the message names both ways", () => {
    expect(problemsOf({ ...base }).length).toBe(0);
    expect(() => loadConfig(base, {}, ["invoiceApiKey"])).toThrow(
      /INVOICE_API_KEY is not set: .*\(or set INVOICE_API_KEY_FILE to a file holding it\)/,
    );
  });

  it("when the CLI guards its error output, then it masks the secrets read from files too", async () => {
    const secrets = processSecrets(
      {
        INVOICE_API_KEY_FILE: await secretFile("key", KEY),
        REDIS_URL_FILE: await secretFile("redis", "redis://:pw-from-file-77@h:6379"),
        CONSOLE_TOKEN_FILE: join(dir, "absent"),
      },
      [],
    );
    expect(secrets).toEqual(expect.arrayContaining([KEY, "pw-from-file-77"]));
  });
});

describe("a secret file read again while the process runs", () => {
  it("when the key file is rotated in place, then refresh uses the new key and reports the change once", async () => {
    const path = await secretFile("key", KEY);
    const events = recorder();
    const key = liveSecret(loadConfig({ ...base, INVOICE_API_KEY_FILE: path }), "invoiceApiKey", events);
    try {
      expect(key.current()).toBe(KEY);
      await rotate(path, `${NEW_KEY}\n`);
      expect(await key.refresh()).toBe(NEW_KEY);
      expect(await key.refresh()).toBe(NEW_KEY);
      expect(key.current()).toBe(NEW_KEY);
      expect(events).toMatchObject({ changes: 1, messages: [] });
    } finally {
      key.close();
    }
  });

  it("when the key file turns to garbage, goes missing or becomes empty mid-night, then the last good key stays in use and each problem is reported once, without the value", async () => {
    const path = await secretFile("key", KEY);
    const events = recorder();
    const key = liveSecret(loadConfig({ ...base, INVOICE_API_KEY_FILE: path }), "invoiceApiKey", events);
    try {
      const garbage = "amn_dev_garbage_from_a_half_write";
      await rotate(path, garbage);
      expect(await key.refresh()).toBe(KEY);
      expect(await key.refresh()).toBe(KEY);
      await rm(path);
      expect(await key.refresh()).toBe(KEY);
      await writeFile(path, "");
      expect(await key.refresh()).toBe(KEY);
      await rm(path);
      await mkdir(path);
      expect(await key.refresh()).toBe(KEY);
      expect(events.messages).toHaveLength(4);
      const [wrongKind, missing, empty, directory] = events.messages;
      expect(wrongKind).toMatch(/^INVOICE_API_KEY_FILE \S+: the value .*Still using the value read before/);
      expect(missing).toMatch(/does not exist.*Still using the value read before; write the new secret/);
      expect(empty).toMatch(/is empty/);
      expect(directory).toMatch(/is a directory/);
      for (const message of events.messages) expect(message).not.toContain("garbage_from");
      await rm(path, { recursive: true });
      await rotate(path, NEW_KEY);
      expect(await key.refresh()).toBe(NEW_KEY);
      expect(events.changes).toBe(1);
    } finally {
      key.close();
    }
  });

  it("when a secret comes from the environment, then it never changes", async () => {
    const key = liveSecret(loadConfig({ ...base, INVOICE_API_KEY: KEY }), "invoiceApiKey", recorder());
    expect(await key.refresh()).toBe(KEY);
    expect(key.current()).toBe(KEY);
    key.close();
  });

  it("when the file changes and nobody asks, then the poll picks the new value up", async () => {
    const path = await secretFile("token", TOKEN);
    const events = recorder();
    const token = liveSecret(loadConfig({ CONSOLE_TOKEN_FILE: path }), "consoleToken", events, 20);
    try {
      await rotate(path, "console-token-rotated-0123456");
      await expect.poll(() => token.current(), { timeout: 5000 }).toBe("console-token-rotated-0123456");
      expect(events.changes).toBe(1);
    } finally {
      token.close();
    }
  });
});
