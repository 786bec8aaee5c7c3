import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { processesStartedIn, stopRunSync } from "../support/run-processes.js";

const cleanups = cleanupsAfterEach();

describe("the processes a test run started", () => {
  it("when a redis-server has written its process title over its arguments and environment, then it is still found by the folder it works in, and stopped", async () => {
    const root = await mkdtemp(join(tmpdir(), "run-processes-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, "redis"));
    const redis = await RedisServer.start({ dir: join(root, "redis") });
    cleanups.push(() => redis.kill());
    const pid = redis.pid ?? 0;

    expect(processesStartedIn(root).map((p) => p.pid)).toEqual([pid]);
    expect(stopRunSync(root).map((p) => p.pid)).toEqual([pid]);
    expect(processesStartedIn(root)).toEqual([]);
  });
});
