import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { runCli } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { cliEnv } from "../support/cli-env.js";

// A Redis without persistence, so that `run` logs its warning about it before finding nothing to do;
// one deployment (one QUEUE_PREFIX) serves the drop folder throughout.
const queuePrefix = `log-format-${randomUUID()}`;
let redis: RedisServer;
let drop: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  redis = await RedisServer.start();
  drop = await tempDropDir();
});

afterAll(async () => {
  await drop.cleanup();
  await redis.dispose();
});

async function run(env: Record<string, string>): Promise<string[]> {
  const result = await runCli(
    ["run"],
    cliEnv(
      {
        redisUrl: redis.url,
        apiUrl: "http://127.0.0.1:9",
        apiKey: "irs_live_log_format_0123456789",
        queuePrefix,
        dropDir: drop.dir,
      },
      env,
    ),
  );
  expect(result.code, result.output).toBe(0);
  return result.output.split("\n").filter((line) => line.includes("Redis persistence is off"));
}

describe("log format of the CLI", () => {
  it("when stderr is not a terminal and LOG_FORMAT is unset, then the warning is a JSON line", async () => {
    const [line, ...others] = await run({});
    expect(others).toEqual([]);
    expect(JSON.parse(line ?? "")).toMatchObject({ level: 40, name: "invoice-relay" });
  });

  it("when LOG_FORMAT is pretty, then the warning is pretty-printed even though stderr is not a terminal", async () => {
    const [line, ...others] = await run({ LOG_FORMAT: "pretty" });
    expect(others).toEqual([]);
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN \(invoice-relay\): Redis persistence is off/);
  });
});
