import { defineConfig } from "vitest/config";

/**
 * What every test run starts, in order; the run scope first, so that what the others start lives in its
 * folder and is stopped with it (test/setup/interrupted-run.test.ts interrupts them).
 */
export const supportSetup = [
  "test/setup/run-scope-global.ts",
  "test/setup/redis-global.ts",
  "test/setup/postgres-global.ts",
];

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: supportSetup,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Test files mostly wait (on the processes they start, deadlines, sockets): measured at about half a
    // core each, so four at a time keep two cores busy.
    maxWorkers: 4,
    reporters: ["default"],
  },
});
