import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmod, chown, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/dev/free-port.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { finish, runCli } from "../support/cli-run.js";
import { startGate } from "../support/gate.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { childEnv, distPath, spawnNode, until } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_e2e_key_0123456789";
/** Generous: a refused folder ends the command at once; main hung here until killed. */
const LIMIT_MS = 20_000;
const CSV = "external_id,currency,destination_country,archive_policy\nUNUSABLE-1,EUR,DE,eu-10y\n";

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 11 });
});
afterAll(async () => {
  await sim.close();
});
const cleanups = cleanupsAfterEach();

async function scratch(): Promise<string> {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  return drop.dir;
}

function env(dropDir: string, more: Record<string, string> = {}): Record<string, string> {
  return cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "unusable", dropDir }, more);
}

describe("a drop folder that cannot be used", () => {
  it("when DROP_DIR does not exist (an unmounted share), then run and ingest exit 1 naming it and what to do, and the folder is not created", async () => {
    const dir = join(await scratch(), "share-not-mounted");
    for (const args of [["run", "--deadline", "10s"], ["ingest"]]) {
      const result = await runCli(args, env(dir), LIMIT_MS);
      expect(result.code, result.output).toBe(1);
      expect(result.output).toContain(`the drop folder ${dir} does not exist`);
      expect(result.output).toMatch(/never the drop folder itself: mount the share or create the folder/);
      expect(result.output).not.toMatch(/nothing to do/);
    }
    await expect(stat(dir)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("when a file is in the drop folder's place, or it is under /proc, then run exits 1 at once naming the path", async () => {
    const file = join(await scratch(), "a-file");
    await writeFile(file, "not a folder");
    const cases: [string, RegExp][] = [
      [file, /is not a folder \(a file is in its place\)/],
      ["/proc", /cannot hold its subfolder processing/],
      ["/proc/self/fdinfo", /cannot hold its subfolder processing|cannot be written to/],
    ];
    for (const [dir, said] of cases) {
      const result = await runCli(["run", "--deadline", "10s"], env(dir), LIMIT_MS);
      expect(result.code, result.output).toBe(1);
      expect(result.output).toContain(`the drop folder ${dir}`);
      expect(result.output).toMatch(said);
    }
  });

  it("when the drop folder cannot be written to, then run exits 1 saying to give the user write access, and no file is taken", async () => {
    const dir = await scratch();
    await writeFile(join(dir, "invoices.csv"), CSV);
    await chmod(dir, 0o555);
    cleanups.push(() => chmod(dir, 0o755));
    // As root, permission bits refuse nothing: the command runs as `nobody`, as a service user would.
    const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const child = spawn(process.execPath, [distPath("workers/cli.js"), "run", "--deadline", "10s"], {
      env: childEnv(env(dir)),
      stdio: ["ignore", "pipe", "pipe"],
      ...asUser,
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS);
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    clearTimeout(timer);
    expect(code, output).toBe(1);
    expect(output).toContain(`the drop folder ${dir} cannot be written to (permission denied)`);
    expect(output).toMatch(/give the user invoice-relay runs as read and write access/);
    expect(await readdir(dir)).toEqual(["invoices.csv"]);
  });

  it("when start's drop folder is missing, then its probes answer, /readyz says not ready naming the folder, and a later scan takes the file once the folder is there", async () => {
    const dir = join(await scratch(), "later");
    const port = await freePort();
    const proc = spawnNode(
      "workers/cli.js",
      ["start", "--schedule", "*/1 * * * * *"],
      env(dir, { HTTP_ADDR: `127.0.0.1:${port}` }),
    );
    cleanups.push(async () => {
      if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    const readyz = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      return response === undefined
        ? undefined
        : { status: response.status, body: (await response.json()) as { checks: Record<string, string> } };
    };
    await until(async () => (await readyz()) !== undefined, LIMIT_MS, `start's probes\n${proc.output()}`);
    const first = await readyz();
    expect(first?.status, proc.output()).toBe(503);
    expect(first?.body.checks["dropFolder"]).toContain(`the drop folder ${dir} does not exist`);
    expect(proc.output()).toContain(`the drop folder ${dir} does not exist`);

    await mkdir(dir);
    await writeFile(join(dir, "invoices.csv"), CSV);
    await until(
      async () =>
        (await readdir(join(dir, "reports")).catch(() => [])).some((n) => n.endsWith(".results.csv")),
      LIMIT_MS,
      `a report\n${proc.output()}`,
    );
    expect((await readyz())?.status).toBe(200);
    expect(proc.child.exitCode).toBeNull();
  });
});

describe("one deployment per drop folder", () => {
  /** Both deployments named, and the process that last served the folder. */
  function owned(first: string, second: string): RegExp {
    return new RegExp(
      `belongs to another deployment \\(QUEUE_PREFIX=${first} on Redis [^,]+, last served by process \\d+ on \\S+ at \\S+\\); ` +
        `this one is QUEUE_PREFIX=${second} on Redis `,
    );
  }

  it("when a second deployment (another QUEUE_PREFIX) runs on a drop folder a started one serves, then run and start exit 1 naming both and do nothing, and still do once the first has stopped", async () => {
    const dir = await scratch();
    const [a, b] = [`first-${randomUUID()}`, `second-${randomUUID()}`];
    const first = env(dir, { QUEUE_PREFIX: a, HTTP_ADDR: "off" });
    const start = spawnNode("workers/cli.js", ["start"], first);
    cleanups.push(async () => {
      if (start.child.exitCode === null) start.child.kill("SIGKILL");
      await start.exited;
    });
    const record = join(dir, "reports", ".deployment.json");
    await until(
      () =>
        stat(record).then(
          () => true,
          () => false,
        ),
      LIMIT_MS,
      `the deployment record\n${start.output()}`,
    );
    const second = env(dir, { QUEUE_PREFIX: b });
    const refused = await runCli(["run", "--deadline", "10s"], second, LIMIT_MS);
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toMatch(owned(a, b));
    expect(refused.output).not.toMatch(/nothing to do/);
    const startRefused = await runCli(["start"], { ...second, HTTP_ADDR: "off" }, LIMIT_MS);
    expect(startRefused.code, startRefused.output).toBe(1);
    expect(startRefused.output).toMatch(owned(a, b));

    start.child.kill("SIGTERM");
    expect((await start.exited).code, start.output()).toBe(0);
    const after = await runCli(["ingest"], second, LIMIT_MS);
    expect(after.code, after.output).toBe(1);
    expect(after.output).toMatch(owned(a, b));
  });

  it("when a deployment's run has ended, then another deployment's run on the folder exits 1 naming both, the record and how to hand it over, and takes nothing; once the record is removed it runs", async () => {
    const dir = await scratch();
    const [a, b] = [`first-${randomUUID()}`, `second-${randomUUID()}`];
    await writeFile(join(dir, "night.csv"), CSV);
    const first = await runCli(["run", "--deadline", "30s"], env(dir, { QUEUE_PREFIX: a }), LIMIT_MS);
    expect(first.code, first.output).toBe(0);
    // The same file dropped again: the first deployment's ledger knows it, the second's would not.
    await writeFile(join(dir, "night.csv"), CSV);
    const second = env(dir, { QUEUE_PREFIX: b });
    const refused = await runCli(["run", "--deadline", "30s"], second, LIMIT_MS);
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toMatch(owned(a, b));
    const record = join(dir, "reports", ".deployment.json");
    expect(refused.output).toContain(`a drop folder of its own (DROP_DIR)`);
    expect(refused.output).toContain(
      `if the other one is retired for good, hand the folder over to this one by removing ${record}`,
    );
    expect((await readdir(dir)).filter((n) => n.endsWith(".csv"))).toEqual(["night.csv"]);
    expect(await readdir(join(dir, "processing"))).toEqual([]);

    await rm(record);
    const handedOver = await runCli(["run", "--deadline", "30s"], second, LIMIT_MS);
    expect(handedOver.code, handedOver.output).toBe(0);
    expect((await readdir(dir)).filter((n) => n.endsWith(".csv"))).toEqual([]);
  });
});

describe("a claimed file that vanishes mid-run", () => {
  it.each([
    ["its file is removed from processing/", "file"],
    ["the whole drop folder is removed", "folder"],
  ] as const)(
    "when %s while its invoices are sent, then run names the file at once and ends with exit 1 naming the batch once they are final, its report is written from Redis where it can be, and status names it with the pass's true tally",
    async (_what, gone) => {
      const dir = await scratch();
      const gate = await startGate(sim.url);
      cleanups.push(() => gate.close());
      const settings = cliEnv({ apiUrl: gate.url, apiKey: API_KEY, name: "vanish", dropDir: dir });
      await writeFile(join(dir, "vanishing.csv"), CSV);
      const running = spawnNode("workers/cli.js", ["run", "--deadline", "60s"], settings);
      await gate.firstRequest;
      const [claimed] = (await readdir(join(dir, "processing"))).filter((n) => !n.startsWith("."));
      await rm(gone === "file" ? join(dir, "processing", claimed ?? "missing") : dir, { recursive: true });
      gate.open();
      const first = await finish(running, LIMIT_MS);
      expect(first.code, first.output).toBe(1);
      expect(first.output).toMatch(/batch \S+ \(vanishing\.csv\): its file \S+vanishing\.csv is gone/);
      expect(first.output).toMatch(/put the file back where it was/);
      // Well before the deadline: the pass does not wait for a report it cannot write.
      expect(first.ms).toBeLessThan(30_000);

      const status = await runCli(["status"], settings, LIMIT_MS);
      expect(status.code, status.output).toBe(0);
      // Named in the pass's record, and its invoice counted as what became of it, not as pending.
      expect(status.output).toMatch(
        /pass \S+: drop folder: vanishing\.csv \(batch \S+\) gone from the drop folder mid-night/,
      );
      expect(status.output).toMatch(/ 1 succeeded\n/);
      expect(status.output).not.toMatch(/1 pending/);
      if (gone === "file") {
        expect(first.output).toMatch(
          /its report, written from Redis, is \S+reports\/vanishing\.csv\.\S+\.results\.csv/,
        );
        const [report] = (await readReports(dir)).values();
        expect(report?.rows.map((r) => [r.line, r.external_id, r.status])).toEqual([
          [2, "UNUSABLE-1", "succeeded"],
        ]);
        expect(JSON.stringify(report?.summary)).toContain("was gone once its invoices were final");
        // Reported: nothing of it is left for a later run.
        const again = await runCli(["run", "--deadline", "60s"], settings, LIMIT_MS);
        expect(again.code, again.output).toBe(0);
      } else {
        const unusable = `its report could not be written in ${join(dir, "reports")} (the drop folder ${dir} does not exist`;
        expect(first.output).toContain(unusable);
        expect(status.output).toMatch(
          /NOT WRITTEN: its file \S+ is gone and its report could not be written in /,
        );
        const again = await runCli(["run", "--deadline", "60s"], settings, LIMIT_MS);
        expect(again.code, again.output).toBe(1);
        expect(again.output).not.toMatch(/nothing to do/);
        expect(again.output).toMatch(/the drop folder \S+ does not exist/);
      }
    },
  );
});

describe("a claimed file that vanishes while its invoices are held", () => {
  it.each([
    ["its file is removed from processing/", "file"],
    ["the whole drop folder is removed", "folder"],
  ] as const)(
    "when %s and its invoices are not final by the deadline, then run names the file as soon as it sees it gone, again in its summary, exit 1, and status names it under the pass",
    async (_what, gone) => {
      const dir = await scratch();
      const gate = await startGate(sim.url);
      cleanups.push(() => gate.close());
      const settings = cliEnv(
        { apiUrl: gate.url, apiKey: API_KEY, name: "vanish-held", dropDir: dir },
        { SHUTDOWN_GRACE_MS: "500" },
      );
      await writeFile(join(dir, "vanishing.csv"), CSV);
      const running = spawnNode("workers/cli.js", ["run", "--deadline", "6s"], settings);
      await gate.firstRequest;
      const [claimed] = (await readdir(join(dir, "processing"))).filter((n) => !n.startsWith("."));
      await rm(gone === "file" ? join(dir, "processing", claimed ?? "missing") : dir, { recursive: true });
      const first = await finish(running, LIMIT_MS);
      expect(first.code, first.output).toBe(1);
      const named =
        /vanishing\.csv \(batch \S+\) gone from the drop folder mid-night; 1 invoice\(s\) of it not final yet go on being sent/;
      const deadline = first.output.indexOf("deadline passed with 1 invoice(s) not final yet");
      // In the log when seen, before the pass's end, and in the summary after it.
      expect(deadline, first.output).toBeGreaterThan(0);
      expect(first.output.slice(0, deadline)).toMatch(named);
      expect(first.output.slice(deadline)).toMatch(
        new RegExp(`invoice-relay run: drop folder: ${named.source}`),
      );

      const status = await runCli(["status"], settings, LIMIT_MS);
      expect(status.code, status.output).toBe(0);
      expect(status.output).toMatch(new RegExp(`pass \\S+: drop folder: ${named.source}`));
    },
  );
});

describe("a drop folder made read-only mid-run", () => {
  it("when its reports/ becomes read-only while the invoices are sent, then run ends with exit 1 naming the file and the fix, and status names it under the pass", async () => {
    const dir = await scratch();
    const gate = await startGate(sim.url);
    cleanups.push(() => gate.close());
    // As root, permission bits refuse nothing: the command runs as `nobody`, as a service user would.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) await chown(dir, 65534, 65534);
    const settings = cliEnv({ apiUrl: gate.url, apiKey: API_KEY, name: "read-only", dropDir: dir });
    await writeFile(join(dir, "invoices.csv"), CSV);
    const child = spawn(process.execPath, [distPath("workers/cli.js"), "run", "--deadline", "60s"], {
      env: childEnv(settings),
      stdio: ["ignore", "pipe", "pipe"],
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    await gate.firstRequest;
    await chmod(join(dir, "reports"), 0o555);
    cleanups.push(() => chmod(join(dir, "reports"), 0o755));
    gate.open();
    const code = await exited;
    clearTimeout(timer);
    expect(code, output).toBe(1);
    expect(output).toMatch(/cannot write the report of invoices\.csv \(batch \S+\) to \S+reports: EACCES/);

    const status = await runCli(["status"], settings, LIMIT_MS);
    expect(status.output).toMatch(
      /pass \S+: drop folder: invoices\.csv \(batch \S+\): its report could not be written: cannot write the report/,
    );
  });
});
