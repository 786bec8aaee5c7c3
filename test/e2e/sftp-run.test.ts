import { execFile } from "node:child_process";
import { copyFile, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { readReports } from "../support/drop.js";
import { runCli } from "../support/cli-run.js";
import { statusJson } from "../cli/ops-support.js";
import { MIXED_SAMPLES, sftpSetup, type SftpSetup } from "../support/sftp-source.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { mountSmallFileSystem } from "../support/small-file-system.js";

const cleanups = cleanupsAfterEach();

async function setup(): Promise<SftpSetup> {
  const s = await sftpSetup();
  cleanups.push(() => s.close());
  return s;
}

/** Rows of the samples as the service must see them: each invoice once. */
function expectEachRoutedOnce(s: SftpSetup): void {
  const stats = s.sim.stats();
  expect(stats.effects.keysWithMultipleEffects).toBe(0);
  expect(stats.effects.externalIdsWithMultipleEffects).toBe(0);
}

describe("invoice-relay run with an SFTP source", () => {
  it("when check --source names the source, then it lists what a pass would take and why the rest is left, taking nothing", async () => {
    const s = await setup();
    await s.writeSources();
    await s.uploadSamples(["invoices-eu.csv"]);
    await writeFile(join(s.inbox, "late.csv.part"), "external_id\n");
    await writeFile(join(s.inbox, "notes.txt"), "hello\n");
    const { code, output } = await runCli(["check", "--source", "acme"], s.env);
    expect(code, output).toBe(0);
    expect(output).toContain("SFTP source acme: 1 file(s) would be taken");
    expect(output).toMatch(/take +invoices-eu\.csv/);
    expect(output).toMatch(/leave +late\.csv\.part .*not a drop file name/);
    expect(await s.remote()).toEqual(["invoices-eu.csv", "late.csv.part", "notes.txt"]);
    const unknown = await runCli(["check", "--source", "nobody"], s.env);
    expect(unknown.code).toBe(1);
    expect(unknown.output).toContain(
      "--source nobody: no SFTP source of that name in the sources file; it has acme",
    );
  });

  it("when the mixed samples wait on the SFTP server, then each is pulled, sent, reported, archived there and its results uploaded to reports/", async () => {
    const s = await setup();
    await s.writeSources();
    await s.uploadSamples();

    const { code, output } = await runCli(["run"], s.env, 60_000);
    expect([0, 2], output).toContain(code);
    expect(await s.remote()).toEqual(["archive", "processing", "reports"]);
    expect(await s.remote("processing")).toEqual([]);
    const archived = await s.remote("archive");
    expect(archived.map((n) => n.replace(/^.*?--/, "")).sort()).toEqual([...MIXED_SAMPLES].sort());
    const reports = await readReports(s.dir);
    expect([...reports.keys()].sort()).toEqual([...MIXED_SAMPLES].sort());
    const uploaded = await s.remote("reports");
    expect(
      uploaded.filter((n) => n.endsWith(".results.csv")),
      output,
    ).toHaveLength(3);
    expect(uploaded.filter((n) => n.endsWith(".summary.json"))).toHaveLength(3);
    for (const name of uploaded.filter((n) => n.endsWith(".results.csv")))
      expect(await readFile(join(s.inbox, "reports", name), "utf8")).toBe(
        await readFile(join(s.dir, "reports", name), "utf8"),
      );
    expectEachRoutedOnce(s);
    expect(s.sim.stats().effects.total).toBeGreaterThan(0);
    const [acme] = (await statusJson(s.env)).sftp_sources;
    expect(acme).toMatchObject({ name: "acme", taken: 3, waiting: 0, reports_pending: 0, last_error: null });

    // The same bytes uploaded again under another name: a batch of their own, reported and uploaded,
    // naming the file that brought them first; nothing is sent again.
    const sent = s.sim.stats().requests.total;
    await copyFile(
      join(import.meta.dirname, "../../samples/invoices-eu.csv"),
      join(s.inbox, "monday-resend.csv"),
    );
    const again = await runCli(["run"], s.env, 60_000);
    expect(again.code, again.output).toBe(2); // its rejected rows are rejected again
    expect(again.output).toMatch(/monday-resend\.csv: the same bytes as invoices-eu\.csv \(batch \S+\)/);
    const resent = (await readReports(s.dir)).get("monday-resend.csv");
    expect(resent?.summary).toMatchObject({ same_content_as: { file: "invoices-eu.csv" } });
    expect(resent?.rows.filter((r) => r.status === "succeeded")).toEqual([]);
    expect(resent?.rows.some((r) => r.status === "duplicate")).toBe(true);
    expect(s.sim.stats().requests.total).toBe(sent);
    expect(await s.remote()).toEqual(["archive", "processing", "reports"]);
    expect(await s.remote("archive")).toHaveLength(4);
    expect((await s.remote("reports")).filter((n) => n.startsWith("monday-resend.csv."))).toHaveLength(2);
  });

  it("when the drop folder's file system fills up during a download, then run exits 1 naming the file, processing/ and the fix, keeps nothing of it, and takes it once there is room", async () => {
    const s = await setup();
    await s.writeSources();
    const processing = join(s.dir, "processing");
    await mkdir(processing);
    // Room for 96 KiB; the file is about 120 KB, read in 64 KiB pieces: a write takes what room is
    // left, and the next fails with ENOSPC.
    let unmount: (() => Promise<void>) | undefined = await mountSmallFileSystem(processing, 96 * 1024);
    cleanups.push(() => unmount?.() ?? Promise.resolve());
    const id = (i: number) => `FULL-${String(i).padStart(3, "0")}-${"x".repeat(240)}`;
    const rows = Array.from({ length: 400 }, (_, i) => `${id(i)},EUR,DE,eu-10y\n`).join("");
    await writeFile(
      join(s.inbox, "big.csv"),
      `external_id,currency,destination_country,archive_policy\n${rows}`,
    );

    const full = await runCli(["run", "--deadline", "30s"], s.env, 60_000);

    expect(full.code, full.output).toBe(1);
    const said =
      `SFTP source acme: big.csv could not be written into ${processing}: ENOSPC, the file system is full; ` +
      "free space on it. Nothing of it is kept there; it stays on the server, and the next pass takes it";
    expect(full.output).toContain(`invoice-relay run: ${said}`);
    expect(full.output).not.toMatch(/grown|rewritten|trying again/);
    expect(await readdir(processing)).toEqual([]);
    expect(await s.remote()).toContain("big.csv");
    expect(s.sim.stats().requests.total).toBe(0);
    const [acme] = (await statusJson(s.env)).sftp_sources;
    expect(acme?.last_error).toBe(said);

    await unmount();
    unmount = undefined;
    const roomy = await runCli(["run", "--deadline", "30s"], s.env, 60_000);
    expect(roomy.code, roomy.output).toBe(0);
    expect(s.sim.stats().effects).toMatchObject({ total: 400, keysWithMultipleEffects: 0 });
  });

  it("when the server offers a host key other than the one pinned, then run exits 1 naming the expected and the offered key, and takes nothing", async () => {
    const s = await setup();
    const pinned = await s.server.hostFingerprint();
    await s.writeSources();
    await s.uploadSamples();
    await s.server.stop();
    await s.server.newHostKey();
    await s.server.start();
    const offered = await s.server.hostFingerprint();

    const { code, output } = await runCli(["run"], s.env, 60_000);
    expect(code, output).toBe(1);
    expect(output).toContain(`offered host key ${offered}`);
    expect(output).toContain(`but ${pinned} is pinned`);
    expect(output).toContain("SFTP source acme");
    expect(await s.remote()).toEqual(expect.arrayContaining(MIXED_SAMPLES));
    expect(s.sim.stats().requests.total).toBe(0);
  });

  it("when the known_hosts file has no entry for the server, then run exits 1 saying so", async () => {
    const s = await setup();
    const known = join(s.dir, "known_hosts");
    await writeFile(known, "# empty\n");
    await s.writeSources("", { host_key: undefined, known_hosts: known });
    await s.uploadSamples(["invoices-eu.csv"]);
    const { code, output } = await runCli(["run"], s.env, 60_000);
    expect(code, output).toBe(1);
    expect(output).toContain(`no entry for [127.0.0.1]:${s.server.port} in ${known}`);
    expect(output).not.toMatch(/trying again/);
  });

  it("when the server refuses the key, then run exits 1 with an error naming the source and the user, and the local folder is still processed", async () => {
    const s = await setup();
    await s.writeSources("", { key_file: s.server.strangerKeyFile });
    await s.uploadSamples(["invoices-eu.csv"]);
    await copyFile(
      join(import.meta.dirname, "../../samples/invoices-us.ndjson"),
      join(s.dir, "local.ndjson"),
    );
    const { code, output } = await runCli(["run"], s.env, 60_000);
    expect(code, output).toBe(1);
    expect(output).toContain("SFTP source acme");
    expect(output).toContain(`refused the login of ${s.server.user}`);
    expect([...(await readReports(s.dir)).keys()]).toEqual(["local.ndjson"]);
    expect(await s.remote()).toContain("invoices-eu.csv");
    const [acme] = (await statusJson(s.env)).sftp_sources;
    expect(acme?.last_error).toContain(`refused the login of ${s.server.user}`);
    expect(acme?.failures).toBeGreaterThanOrEqual(1);
    const status = await runCli(["status"], s.env);
    expect(status.output).toContain("SFTP source acme failed at");
  });

  it("when the password is wrong, then run exits 1 naming the source, and the password appears nowhere", async () => {
    const s = await setup();
    const secret = "not-the-password-8c1f";
    await s.writeSources("", { key_file: undefined, password_env: "ACME_SFTP_PASSWORD" });
    const { code, output } = await runCli(["run"], { ...s.env, ACME_SFTP_PASSWORD: secret }, 60_000);
    expect(code, output).toBe(1);
    expect(output).toContain("SFTP source acme");
    expect(output).toContain(`refused the login of ${s.server.user} with the password`);
    expect(output).not.toContain(secret);
  });

  it("when the key's passphrase is wrong, then run exits 1 at once and says so once: no retry, no connection attempted, no message inside another", async () => {
    const s = await setup();
    const key = join(s.dir, "locked_ed25519");
    await promisify(execFile)("ssh-keygen", ["-q", "-t", "ed25519", "-N", "right-phrase", "-f", key]);
    const phrase = join(s.dir, "phrase");
    await writeFile(phrase, "wrong-phrase\n");
    await s.writeSources("", { key_file: key, passphrase_file: phrase });
    await s.uploadSamples(["invoices-eu.csv"]);
    const { code, output } = await runCli(["run"], { ...s.env, LOG_LEVEL: "info" }, 60_000);
    expect(code, output).toBe(1);
    const said = output.split("\n").filter((l) => l.includes("passphrase_file"));
    // Once in the log, once in the run's last words.
    expect(said, output).toHaveLength(2);
    for (const line of said) {
      expect(line).not.toMatch(/could not connect|trying again/);
      expect(line.split("SFTP source acme").length - 1, line).toBe(1);
    }
    expect(await s.remote()).toContain("invoices-eu.csv");
  });

  it("when the folder holds a sub-folder, a symbolic link and a name with a line break, then check --source says why each is left and prints the name escaped", async () => {
    const s = await setup();
    await s.writeSources();
    await s.uploadSamples(["invoices-eu.csv"]);
    await mkdir(join(s.inbox, "older.csv"));
    await symlink(join(s.inbox, "invoices-eu.csv"), join(s.inbox, "link.csv"));
    await writeFile(join(s.inbox, "odd\nname.csv"), "external_id\n");
    const { code, output } = await runCli(["check", "--source", "acme"], { ...s.env, SETTLE_MS: "0" });
    expect(code, output).toBe(0);
    expect(output).toMatch(/leave +older\.csv .*a folder: folders are not looked into/);
    expect(output).toMatch(/leave +link\.csv .*a symbolic link: links are not followed/);
    expect(output).toContain('"odd\\nname.csv"');
    expect(output).not.toContain("odd\nname");
  });
});
