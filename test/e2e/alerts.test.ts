import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startSimulator } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";
import { testRedisUrl } from "../support/redis.js";
import { RedisMonitor } from "../support/redis-monitor.js";
import { closedWebhookUrl, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_alerts_key_0123456789";
const cleanups = cleanupsAfterEach();

const noticeSchema = z.object({
  event: z.string(),
  text: z.string(),
  exit_code: z.number().nullable(),
  reason: z.string().nullable(),
  batches: z.array(
    z.object({
      file: z.string(),
      batch: z.string(),
      counts: z.record(z.string(), z.number()),
      first_errors: z.array(
        z.object({ line: z.number(), external_id: z.string().nullable(), error: z.string() }),
      ),
      url: z.string().nullable(),
    }),
  ),
});

async function setup(simOptions: Parameters<typeof startSimulator>[0] = {}) {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 3, ...simOptions });
  const drop = await tempDropDir();
  const receiver = await startWebhookReceiver();
  cleanups.push(
    () => sim.close(),
    drop.cleanup,
    () => receiver.close(),
  );
  const env = cliEnv(
    { apiUrl: sim.url, apiKey: API_KEY, name: "alerts", dropDir: drop.dir },
    {
      BACKOFF_BASE_MS: "50",
      BACKOFF_CAP_MS: "200",
      NOTIFY_WEBHOOK_URL: receiver.url,
      CONSOLE_URL: "https://relay.example.com/",
    },
  );
  return { sim, dir: drop.dir, env, receiver };
}

const GOOD = (id: string) => `${id},EUR,DE,eu-10y`;
const csv = (...rows: string[]) =>
  ["external_id,currency,destination_country,archive_policy", ...rows].join("\n") + "\n";

/** Every received body, parsed; also checks that none carries the API key or the webhook's token. */
function received(receiver: WebhookReceiver) {
  for (const post of receiver.posts) {
    const raw = JSON.stringify(post.body);
    expect(raw).not.toContain(API_KEY);
    expect(raw).not.toContain(receiver.token);
    expect(post.contentType).toBe("application/json");
  }
  return receiver.posts.map((p) => noticeSchema.parse(p.body));
}

function worker(env: Record<string, string>): Spawned {
  const proc = spawnNode("workers/cli.js", ["worker"], env);
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  });
  return proc;
}

describe("webhook alerts", () => {
  it("when a run ends with rejected rows (exit 2), then exactly one alert arrives with the counts, first errors and link", async () => {
    const { dir, env, receiver } = await setup();
    await writeFile(
      join(dir, "eu.csv"),
      csv(GOOD("A-1"), "A-2,XYZ,DE,eu-10y", GOOD("A-3"), "A-4,EUR,DE,eu-0y"),
    );
    const { code, output } = await runCli(["run"], env);
    expect(code, output).toBe(2);
    const notices = received(receiver);
    expect(notices).toHaveLength(1);
    const [notice] = notices;
    expect(notice?.event).toBe("run_finished_with_problems");
    expect(notice?.exit_code).toBe(2);
    expect(notice?.batches).toHaveLength(1);
    const batch = notice?.batches[0];
    expect(batch?.file).toBe("eu.csv");
    expect(batch?.counts).toMatchObject({ succeeded: 2, rejected: 2, failed: 0 });
    expect(batch?.first_errors.map((e) => [e.line, e.external_id])).toEqual([
      [3, "A-2"],
      [5, "A-4"],
    ]);
    expect(batch?.url).toBe(`https://relay.example.com/batches/${batch?.batch ?? ""}`);
    expect(notice?.text).toContain("2 succeeded, 2 rejected");
  });

  it("when a run ends clean (exit 0), then no alert is sent", async () => {
    const { dir, env, receiver } = await setup();
    await writeFile(join(dir, "ok.csv"), csv(GOOD("B-1"), GOOD("B-2")));
    const { code, output } = await runCli(["run"], env);
    expect(code, output).toBe(0);
    expect(receiver.posts).toEqual([]);
  });

  it("when the service refuses the API key, then the run exits 1 and exactly one alert says the key was refused", async () => {
    const { dir, env, receiver } = await setup({ apiKey: "irs_live_some_other_key_987654" });
    await writeFile(join(dir, "k.csv"), csv(...Array.from({ length: 20 }, (_, i) => GOOD(`K-${i}`))));
    const { code, output } = await runCli(["run"], env);
    expect(code, output).toBe(1);
    const notices = received(receiver);
    expect(notices.map((n) => n.event)).toEqual(["api_key_refused"]);
    expect(notices[0]?.text).toContain("fix INVOICE_API_KEY");
  });

  it("when the webhook is down, then the run's exit code is unchanged and the log names the failure without the URL's token", async () => {
    const { dir, env } = await setup();
    const down = await closedWebhookUrl();
    await writeFile(join(dir, "eu.csv"), csv(GOOD("C-1"), "C-2,XYZ,DE,eu-10y"));
    const { code, output } = await runCli(["run"], { ...env, NOTIFY_WEBHOOK_URL: down });
    expect(code, output).toBe(2);
    expect(output).toContain("alert not delivered");
    expect(output).toContain(`${new URL(down).origin}/[redacted]`);
    expect(output).not.toContain("down-token-77aa");
    expect(output).not.toContain(new URL(down).pathname);
  });

  it("when a batch cannot finish, then two workers with NOTIFY_STUCK_AFTER=1s send exactly one alert for it", async () => {
    const { dir, env, receiver } = await setup({ errorRate: 1 });
    const stuckEnv = { ...env, NOTIFY_STUCK_AFTER: "1s", MAX_ATTEMPTS: "1000" };
    await writeFile(join(dir, "stuck.csv"), csv(GOOD("S-1"), GOOD("S-2")));
    const ingested = await runCli(["ingest"], stuckEnv);
    expect(ingested.code, ingested.output).toBe(0);
    // Every check asks for the batch's notice marker (SET NX): counted per connection, i.e. per worker.
    const monitor = await RedisMonitor.start(testRedisUrl());
    const checks = new Map<string, number>();
    monitor.onSighting(({ args, source }) => {
      const [command, name] = args.map((a) => a.toString());
      if (command?.toUpperCase() === "SET" && name?.endsWith(":stuck-notice") && receiver.posts.length > 0)
        checks.set(source, (checks.get(source) ?? 0) + 1);
    });
    cleanups.push(() => {
      monitor.stop();
      return Promise.resolve();
    });
    const a = worker(stuckEnv);
    const b = worker(stuckEnv);
    await until(() => Promise.resolve(receiver.posts.length > 0), 20_000, "the stuck-batch alert");
    // Each worker gets several more checks after the alert, in which it could send a second one.
    await until(
      () => Promise.resolve([...checks.values()].filter((n) => n >= 3).length >= 2),
      20_000,
      "three more checks by each worker",
    );
    a.child.kill("SIGTERM");
    b.child.kill("SIGTERM");
    expect((await a.exited).code, a.output()).toBe(0);
    expect((await b.exited).code, b.output()).toBe(0);
    const notices = received(receiver);
    expect(notices.map((n) => n.event)).toEqual(["batch_stuck"]);
    expect(notices[0]?.batches.map((x) => [x.file, x.counts["pending"]])).toEqual([["stuck.csv", 2]]);
  });
});
