import { createHash, randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { RedisServer } from "../../src/dev/redis-server.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { Passes } from "../../src/ledger/passes.js";
import { LuaScript } from "../../src/ledger/lua-script.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { RedisRecordRestorer } from "../../src/ledger/restore-records.js";
import { Retention } from "../../src/ledger/retention.js";
import { SendBudget } from "../../src/ledger/send-budget.js";
import { RedisMonitor, type Sighting } from "../support/redis-monitor.js";
import { testPrefix } from "../support/redis.js";

/*
 * Every Redis key a ledger script touches must be in its KEYS (Redis Cluster routes by them, and
 * Dragonfly's cluster emulation refuses any other). One hash-tagged slot would hide an undeclared key, so
 * this watches a private Redis with MONITOR while the ledger API drives every script through every path
 * that touches keys, and asks the server (COMMAND GETKEYS) which arguments of each command a script ran
 * are keys.
 */

const SCRIPT_NAMES = readdirSync(new URL("../../src/ledger/lua/", import.meta.url))
  .filter((file) => file.endsWith(".lua"))
  .map((file) => file.slice(0, -".lua".length))
  .sort();
const SCRIPT_BY_SHA = new Map(SCRIPT_NAMES.map((name) => [new LuaScript(name).sha, `${name}.lua`]));
const SCRIPT_COMMANDS = new Set(["eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"]);

/** Where MONITOR prints a script's own commands: after the EVAL line (Redis 7.0) or before it. */
type Order = "script first" | "commands first";

interface ScriptRun {
  readonly script: string;
  readonly declared: readonly Buffer[];
  readonly commands: Buffer[][];
}

const sha1 = (data: string | Buffer) => createHash("sha1").update(data).digest("hex");
const commandName = (args: readonly Buffer[]) => args[0]?.toString().toLowerCase() ?? "";

/** Everything Redis ran while `drive` ran, as MONITOR (on a socket of its own) printed it. */
async function watch(url: string, redis: Redis, drive: () => Promise<unknown>): Promise<Sighting[]> {
  const monitor = await RedisMonitor.start(url);
  const lines: Sighting[] = [];
  const marker = `declared-keys:end:${randomUUID()}`;
  const ended = new Promise<void>((resolve) => {
    monitor.onSighting((sighting) => {
      const [name, text] = sighting.args;
      if (name?.toString().toLowerCase() === "echo" && text?.toString() === marker) resolve();
      else lines.push(sighting);
    });
  });
  try {
    await drive();
    await redis.echo(marker);
    await ended;
  } finally {
    monitor.stop();
  }
  return lines;
}

/** Which side of its EVAL line this server prints a script's commands, seen on a probe script. */
async function monitorOrder(url: string, redis: Redis): Promise<Order> {
  const probe = `declared-keys:probe:${randomUUID()}`;
  const lines = await watch(url, redis, () => redis.eval("return redis.call('EXISTS', KEYS[1])", 1, probe));
  const script = lines.findIndex((line) => line.source !== "lua" && commandName(line.args) === "eval");
  const inside = lines.findIndex((line) => line.source === "lua");
  if (script < 0 || inside < 0) throw new Error("MONITOR showed no script run: cannot group its lines");
  return inside < script ? "commands first" : "script first";
}

function scriptRun(args: readonly Buffer[]): ScriptRun {
  const kind = commandName(args);
  const body = args[1] ?? Buffer.alloc(0);
  const sha = kind.startsWith("evalsha") ? body.toString().toLowerCase() : sha1(body);
  const script = kind.startsWith("fcall")
    ? `function ${body.toString()}`
    : (SCRIPT_BY_SHA.get(sha) ?? `script ${sha}`);
  const numkeys = Number(args[2]?.toString());
  return { script, declared: args.slice(3, 3 + numkeys), commands: [] };
}

/**
 * The script runs in MONITOR lines, each with the commands it ran. A script's commands are printed
 * together, right next to its line (a script is atomic); a script command found anywhere else fails.
 */
function scriptRuns(lines: readonly Sighting[], order: Order): ScriptRun[] {
  const runs: ScriptRun[] = [];
  let unclaimed: Buffer[][] = []; // "commands first": what the next script line takes
  let previous: "script" | "lua" | "client" = "client";
  const stray = (args: readonly Buffer[]) =>
    new Error(
      `MONITOR showed ${commandName(args).toUpperCase()} from a script, with no script run next to it`,
    );
  for (const line of lines) {
    const isScript = line.source !== "lua" && SCRIPT_COMMANDS.has(commandName(line.args));
    if (line.source === "lua") {
      const run = runs.at(-1);
      if (order === "commands first") unclaimed.push([...line.args]);
      else if (previous === "client" || run === undefined) throw stray(line.args);
      else run.commands.push([...line.args]);
      previous = "lua";
    } else {
      const first = unclaimed[0];
      if (first !== undefined && !isScript) throw stray(first);
      if (isScript) runs.push({ ...scriptRun(line.args), commands: unclaimed });
      unclaimed = [];
      previous = isScript ? "script" : "client";
    }
  }
  const first = unclaimed[0];
  if (first !== undefined) throw stray(first);
  return runs;
}

/** Which arguments of a command are keys, as the server says (COMMAND GETKEYS). */
function keyFinder(redis: Redis): (command: readonly Buffer[]) => Promise<Buffer[]> {
  const keyless = new Map<string, Promise<boolean>>();
  const hasNoKeys = async (name: string) => {
    const [info] = z.array(z.array(z.unknown())).parse(await redis.call("COMMAND", "INFO", name));
    const flags = z.array(z.string()).parse(info?.[2] ?? []);
    const specs = z.array(z.unknown()).parse(info?.[8] ?? []);
    const subcommands = z.array(z.unknown()).parse(info?.[9] ?? []);
    const firstKey = z.number().parse(info?.[3] ?? 0);
    return firstKey === 0 && !flags.includes("movablekeys") && specs.length + subcommands.length === 0;
  };
  return async (command) => {
    const name = commandName(command);
    const known = keyless.get(name) ?? hasNoKeys(name);
    keyless.set(name, known);
    if (await known) return [];
    const keys = await redis.callBuffer("COMMAND", "GETKEYS", ...command);
    return z.array(z.instanceof(Buffer)).parse(keys);
  };
}

/** The check: every key a script run touched, against its KEYS; which scripts ran a command at all. */
async function checkKeys(
  lines: readonly Sighting[],
  order: Order,
  keysOf: (command: readonly Buffer[]) => Promise<Buffer[]>,
): Promise<{ undeclared: string[]; ran: ReadonlySet<string> }> {
  const undeclared: string[] = [];
  const ran = new Set<string>();
  for (const run of scriptRuns(lines, order)) {
    const declared = new Set(run.declared.map((key) => key.toString("latin1")));
    if (run.commands.length > 0) ran.add(run.script);
    for (const command of run.commands) {
      for (const key of await keysOf(command)) {
        if (declared.has(key.toString("latin1"))) continue;
        const problem = `${run.script}: ${commandName(command).toUpperCase()} touches "${key.toString()}", not in its KEYS`;
        if (!undeclared.includes(problem)) undeclared.push(problem);
      }
    }
  }
  return { undeclared, ran };
}

/** A client for the ledger that runs an action right before a script's next run (once). */
class Interposer {
  readonly #actions = new Map<string, () => Promise<unknown>>();
  readonly client: Redis;

  constructor(redis: Redis) {
    const actions = this.#actions;
    this.client = new Proxy(redis, {
      get(target, property) {
        if (property === "evalsha")
          return async (sha: string, ...rest: (string | number | Buffer)[]) => {
            const action = actions.get(sha);
            actions.delete(sha);
            await action?.();
            return target.call("EVALSHA", sha, ...rest);
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  before(script: string, action: () => Promise<unknown>): void {
    this.#actions.set(new LuaScript(script).sha, action);
  }
}

const DAY = 86_400_000;
const RETENTION = 7 * DAY;
const OK = { httpStatus: 201, correlationId: "c1", responseBody: '{"ok":true}' };
const BAD = { httpStatus: 422, error: "bad", document: "{}" };
const row = (line: number, externalId = `INV-${randomUUID()}`) => ({ line, key: randomUUID(), externalId });
const kinds = (...names: string[]) => names.map((kind) => ({ kind }));

function fixture(redis: Redis, via: Interposer) {
  const prefix = testPrefix();
  const clock = { now: 1_800_000_000_000 };
  const now = () => clock.now;
  const batches = new BatchStore(redis, prefix, now);
  // The answers carry their requests' counts (the fleet's totals and its series hashes).
  const ledger = new RedisLedger(via.client, prefix, now, RETENTION);
  const names = ledger.names;
  const retention = new Retention(via.client, prefix, batches, RETENTION, now);
  const open = (id: string) =>
    batches.open({ id, file: `${id}.csv`, format: "csv", path: `/${id}`, host: "h" });
  const report = (id: string, counts: object) =>
    batches.markReported(id, {
      report_csv: "r",
      summary_json: "s",
      counts: JSON.stringify(counts),
      path: "p",
    });
  return { clock, batches, names, ledger, retention, open, report };
}

/**
 * register, finish-ingest, statuses, answers and requeue, through each of their paths; with the outbox
 * on, also the paths that write its events, a refused attempt and a report's rows.
 */
async function driveLedger(redis: Redis, via: Interposer, outbox = false): Promise<void> {
  const { names, ledger, batches, open, report } = fixture(redis, via);
  if (outbox) await ledger.enableOutbox();
  const facts = (number: number) => ({
    number,
    startedAt: 1_800_000_000_000,
    durationMs: 2,
    httpStatus: 503,
    counted: { answerClass: "5xx" as const, retry: "server_error" as const },
  });
  const all = [row(2), row(3), row(4), row(5), row(6), row(7)] as const;
  const [a, b, c, e, g, h] = all;
  await open("b1");
  expect(await ledger.registerRows("b1", all)).toEqual(kinds(...all.map(() => "new")));
  expect(await ledger.registerRows("b1", all)).toEqual(kinds(...all.map(() => "queued"))); // re-run: seen
  await ledger.finishIngest("b1");
  expect(await ledger.statusOf(a.key)).toBe("queued");
  expect(await ledger.statusOf(randomUUID())).toBeUndefined();
  expect(await ledger.recordRetrying(a.key, { httpStatus: 503, error: "HTTP 503", attempt: facts(1) })).toBe(
    "retrying",
  );
  await ledger.recordRefusedAttempt(a.key, facts(2));
  await ledger.recordRefusedAttempt(randomUUID(), facts(1));
  const finals = [a, c].map((r) => ledger.recordSucceeded(r.key, OK));
  finals.push(...[b, e, g, h].map((r) => ledger.recordFailed(r.key, BAD)));
  expect(await Promise.all(finals)).toEqual(all.map(() => "ok"));
  expect(await ledger.recordFailed(a.key, { ...BAD, attempt: facts(3) })).toBe("already-succeeded");
  await batches.addReportRows("b1", [[2, a.key, "succeeded", a.externalId, null, null]]);
  await batches.update("b1", { state: "ingested" });
  await batches.markChanged("b1", "changed");
  expect(await ledger.recordRetrying(a.key, {})).toBe("succeeded");
  expect(await ledger.recordFailed(b.key, BAD)).toBe("already");
  expect(await ledger.recordRetrying(b.key, {})).toBe("failed");
  const lost = randomUUID();
  const unknown = [ledger.recordSucceeded(lost, OK), ledger.recordRetrying(lost, {})];
  expect(await Promise.all(unknown)).toEqual(["unknown", "unknown"]);
  await report("b1", { succeeded: 2, failed: 4 });

  // duplicate, conflict, corrected version of a failed key (supersede), re-drop of a failed key (requeue)
  const conflicting = row(3, c.externalId);
  const corrected = row(4, b.externalId);
  const b2 = [{ ...a, line: 2 }, conflicting, corrected, { ...e, line: 5 }];
  await open("b2");
  const conflict = { kind: "conflict", earlierKey: c.key };
  expect(await ledger.registerRows("b2", b2)).toEqual([
    { kind: "duplicate" },
    conflict,
    ...kinds("new", "requeue"),
  ]);
  expect(await ledger.registerRows("b2", b2)).toEqual([
    { kind: "duplicate" },
    conflict,
    ...kinds("queued", "queued"),
  ]);
  await ledger.finishIngest("b2");

  // a superseded key re-dropped (its failed successor superseded in turn), a key in flight joined
  expect(await ledger.recordFailed(corrected.key, BAD)).toBe("ok");
  const first = row(8);
  await open("b3");
  const b3 = [{ ...b, line: 2 }, { ...e, line: 3 }, first];
  expect(await ledger.registerRows("b3", b3)).toEqual(kinds("requeue", "join", "new"));
  expect(await ledger.statusOf(corrected.key)).toBe("superseded");
  // late successes: of a superseded key, of a failed one
  const late = [ledger.recordSucceeded(corrected.key, OK), ledger.recordSucceeded(g.key, OK)];
  expect(await Promise.all(late)).toEqual(["ok", "ok"]);

  // retry: superseded (the index moved by hand, as in test/ledger/redis-ledger.test.ts), and requeued
  // after a 'stale' (the index changed between the read and the script)
  const newer = row(2, first.externalId);
  await open("b4");
  expect(await ledger.registerRows("b4", [newer])).toEqual([{ kind: "conflict", earlierKey: first.key }]);
  expect(await ledger.recordFailed(first.key, BAD)).toBe("ok");
  await redis.hset(names.externalIds, first.externalId, newer.key);
  await open("b5");
  expect(await ledger.registerRows("b5", [newer])).toEqual(kinds("new"));
  expect(await ledger.requeueFailed(first.key)).toBe("superseded");
  via.before("requeue", () => redis.hset(names.externalIds, h.externalId, lost));
  expect(await ledger.requeueFailed(h.key)).toBe("requeued");

  // register 'stale' twice: the index changes between the ledger's first and second call
  via.before("register", () => {
    via.before("register", () => redis.hset(names.externalIds, a.externalId, c.key));
    return Promise.resolve();
  });
  await open("b6");
  const again = row(2, a.externalId);
  expect(await ledger.registerRows("b6", [again])).toEqual([conflict]);
  expect(await redis.hget(names.fleetTotals, "retries:server_error")).toBe("4");
}

/** pass-write: a pass opened, ended, and the passes older than the retention removed. */
async function drivePasses(via: Interposer): Promise<void> {
  const passes = new Passes(via.client, testPrefix());
  const pass = { kind: "run" as const, batches: ["b1"], invoices: {} };
  await passes.write({ ...pass, id: "p1", startedAt: 1000 }, DAY, 2000);
  await passes.write({ ...pass, id: "p1", startedAt: 1000, endedAt: 1500, exitCode: 0 }, DAY, 2000);
  await passes.write({ ...pass, id: "p2", startedAt: 2 * DAY }, DAY, 2 * DAY + 1);
  expect((await passes.newest(5)).map((p) => p.id)).toEqual(["p2"]);
  // a run's lease, lapsed (its holder silent for longer than the lease)
  await passes.write({ ...pass, id: "p3", startedAt: 2 * DAY + 2 }, DAY, 2 * DAY + 3, "elsewhere.example:1");
  await via.client.hset(passes.names.passLeases, "p3", "1 elsewhere.example:1");
  expect((await passes.newest(1)).map((p) => [p.id, p.exitCode])).toEqual([["p3", 1]]);
}

/** restore (deduplication beyond retention): a record written back, and one already there left alone. */
async function driveRestore(redis: Redis, via: Interposer): Promise<void> {
  const prefix = testPrefix();
  const ledger = new RedisLedger(via.client, prefix);
  const restorer = new RedisRecordRestorer(via.client, prefix);
  const [gone, live] = [row(2), row(3)];
  expect(await ledger.registerRows("p1", [live])).toEqual(kinds("new"));
  const past = {
    status: "succeeded",
    httpStatus: 201,
    correlationId: "c0",
    attempts: 1,
    responseBody: "{}",
  } as const;
  expect(
    await restorer.restoreRecords("p1", [
      { ...gone, ...past },
      { ...live, ...past },
    ]),
  ).toBe(1);
}

/** expire-keys and expire-batch: records removed, a record kept for a live batch, batches reopened. */
async function driveRetention(redis: Redis, via: Interposer): Promise<void> {
  const { clock, names, ledger, retention, open, report } = fixture(redis, via);
  const [p, q, s] = [row(2), row(3), row(3)];
  await open("r1");
  expect(await ledger.registerRows("r1", [p, q])).toEqual(kinds("new", "new"));
  await ledger.finishIngest("r1");
  await open("r2");
  expect(await ledger.registerRows("r2", [p, s])).toEqual(kinds("join", "new"));
  await ledger.finishIngest("r2");
  expect(await Promise.all([p, q, s].map((r) => ledger.recordSucceeded(r.key, OK)))).toEqual([
    "ok",
    "ok",
    "ok",
  ]);
  await report("r1", { succeeded: 2 });
  clock.now += DAY;
  await report("r2", { succeeded: 2 });
  clock.now += RETENTION - DAY + 1;
  // r1 goes; p stays with r2
  expect(await retention.sweep()).toEqual({ batches: 1, records: 1, keptForFailed: 0 });
  expect(await ledger.statusOf(p.key)).toBe("succeeded");
  clock.now += DAY;
  // r2 reopened right before each script: it stays
  via.before("expire-keys", () => redis.hset(names.pending, "r2", 1));
  expect(await retention.sweep()).toEqual({ batches: 0, records: 0, keptForFailed: 0 });
  await redis.hset(names.pending, "r2", 0);
  via.before("expire-batch", () => redis.zadd(names.completed, clock.now, "r2"));
  expect(await retention.sweep()).toEqual({ batches: 0, records: 0, keptForFailed: 0 });
  await redis.zrem(names.completed, "r2");
  expect(await retention.sweep()).toEqual({ batches: 1, records: 0, keptForFailed: 0 });
  expect(await ledger.statusOf(p.key)).toBeUndefined();
}

/** send-budget: booking send times, none when the schedule is full, a state written or not, a hold, counts. */
async function driveBudget(via: Interposer): Promise<void> {
  const budget = new SendBudget(via.client, testPrefix());
  expect((await budget.call({ wanted: 4, intervalMs: 10, aheadMs: 100 })).booked).toBe(4);
  expect((await budget.call({ wanted: 1, intervalMs: 50, aheadMs: 100 })).booked).toBe(1);
  expect((await budget.call({ wanted: 1, intervalMs: 1000, aheadMs: 100 })).booked).toBe(0);
  const written = await budget.call({ write: { from: "0", state: '{"v":1}', version: "1" } });
  expect(written.v).toBe("1");
  const held = await budget.call({ write: { from: "0", state: '{"v":2}', version: "2" }, holdMs: 1000 });
  expect(held.v).toBe("1");
  expect((await budget.read()).hold).toBeGreaterThan(0);
  const counted = await budget.call({ accepted: 2, refused: 1, capped: true });
  expect(counted).toMatchObject({ accepted: 2, refused: 1 });
}

describe("ledger scripts and their KEYS", () => {
  let server: RedisServer;
  let redis: Redis;
  let inspector: Redis;
  let order: Order;

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url, { maxRetriesPerRequest: null });
    inspector = new Redis(server.url);
    order = await monitorOrder(server.url, redis);
  });
  afterAll(async () => {
    await Promise.all([redis.quit(), inspector.quit()]);
    await server.dispose();
  });

  it("when every ledger script runs through each of its paths, then every key it touches is in its KEYS", async () => {
    const via = new Interposer(redis);
    const lines = await watch(server.url, redis, async () => {
      await driveLedger(redis, via);
      await driveLedger(redis, via, true);
      await driveRetention(redis, via);
      await driveRestore(redis, via);
      await driveBudget(via);
      await drivePasses(via);
    });
    const { undeclared, ran } = await checkKeys(lines, order, keyFinder(inspector));
    expect(undeclared).toEqual([]);
    expect(SCRIPT_NAMES.map((name) => `${name}.lua`).filter((script) => !ran.has(script))).toEqual([]);
  });

  it("when MONITOR prints a script's commands before or after its line, then each command goes to its own run", () => {
    const at = (source: string, ...args: string[]): Sighting => ({
      args: args.map((a) => Buffer.from(a)),
      source,
    });
    const sha = new LuaScript("statuses").sha;
    const [one, two] = [
      ["evalsha", sha, "1", "k1"],
      ["evalsha", sha, "2", "k2", "k3"],
    ];
    const [first, second] = [at("client", ...(one ?? [])), at("client", ...(two ?? []))];
    const inside = [at("lua", "GET", "k1"), at("lua", "GET", "k2"), at("lua", "GET", "k3")] as const;
    const before = at("client", "GET", "x");
    const after = at("client", "SET", "y", "1");
    const readable = (runs: ScriptRun[]) =>
      runs.map((run) => ({
        script: run.script,
        declared: run.declared.map(String),
        commands: run.commands.map((command) => command.map(String)),
      }));
    const expected = [
      { script: "statuses.lua", declared: ["k1"], commands: [["GET", "k1"]] },
      {
        script: "statuses.lua",
        declared: ["k2", "k3"],
        commands: [
          ["GET", "k2"],
          ["GET", "k3"],
        ],
      },
    ];
    const [k1, k2, k3] = inside;
    const scriptFirst = [before, first, k1, second, k2, k3, after];
    const commandsFirst = [before, k1, first, k2, k3, second, after];
    expect(readable(scriptRuns(scriptFirst, "script first"))).toEqual(expected);
    expect(readable(scriptRuns(commandsFirst, "commands first"))).toEqual(expected);
    expect(() => scriptRuns([first, before, k1], "script first")).toThrow(/GET from a script/);
    expect(() => scriptRuns([k1, before, first], "commands first")).toThrow(/GET from a script/);
  });

  it("when a script touches a key it did not declare, then the check names the script, the command and the key", async () => {
    const [declared, other] = [`declared-keys:${randomUUID()}`, `declared-keys:${randomUUID()}`];
    const source = [
      "redis.call('SET', KEYS[1], 'x')",
      "redis.call('MSET', KEYS[1], 'y', ARGV[1], 'z')",
      "return redis.call('INCR', ARGV[1] .. ':n')",
    ].join("\n");
    const lines = await watch(server.url, redis, () => redis.eval(source, 1, declared, other));
    const { undeclared, ran } = await checkKeys(lines, order, keyFinder(inspector));
    const script = `script ${sha1(source)}`;
    expect(undeclared).toEqual([
      `${script}: MSET touches "${other}", not in its KEYS`,
      `${script}: INCR touches "${other}:n", not in its KEYS`,
    ]);
    expect([...ran]).toEqual([script]);
  });
});
