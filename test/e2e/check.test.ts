import { copyFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { cli, opsSetup, type OpsSetup } from "../cli/ops-support.js";
import { readReports } from "../support/drop.js";

const SAMPLES = join(import.meta.dirname, "../../samples");
const setups: OpsSetup[] = [];
afterEach(async () => {
  for (const s of setups.splice(0)) await s.cleanup();
});

/** `check --json`: one object per file, as src/use-cases/check-file.ts documents it. */
const checkedSchema = z.strictObject({
  file: z.string(),
  profile: z.string().nullable(),
  format: z.enum(["csv", "json", "ndjson"]),
  encoding: z
    .strictObject({ name: z.string(), by: z.enum(["profile", "byte-order-mark", "default"]) })
    .nullable(),
  delimiter: z.strictObject({ value: z.string(), detected: z.boolean() }).nullable(),
  header: z
    .strictObject({
      line: z.number(),
      columns: z.array(z.tuple([z.string(), z.string().nullable()])),
      columns_left_out: z.number(),
    })
    .nullable(),
  rows: z.number(),
  valid: z.number(),
  rejected: z.number(),
  duplicate: z.number(),
  conflict: z.number(),
  errors: z.array(
    z.strictObject({ line: z.number(), external_id: z.string().nullable(), error: z.string() }),
  ),
  documents: z.array(z.strictObject({ line: z.number(), idempotency_key: z.string(), body: z.string() })),
  unknown_fields: z.array(z.string()),
  unknown_fields_left_out: z.number(),
  file_error: z.string().nullable(),
});

async function check(s: OpsSetup, files: readonly string[], extra: readonly string[] = []) {
  // No Redis and no service: both point at a closed port, so using either would fail the command.
  const env = { ...s.env, REDIS_URL: "redis://127.0.0.1:9", INVOICE_API_URL: "http://127.0.0.1:9" };
  const result = await cli(["check", "--json", ...extra, ...files], env);
  const lines = result.stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "");
  return {
    code: result.code,
    stderr: result.stderr,
    files: lines.map((l) => checkedSchema.parse(JSON.parse(l))),
  };
}

describe("invoice-relay check", () => {
  it("when vendor files are checked with their profiles, then check says what run then reports: the same counts, the same errors on the same lines, and the documents' keys", async () => {
    const s = await opsSetup();
    setups.push(s);
    for (const name of ["sap-invoices-de.csv", "erp-export.json", "invoices-eu.csv", "sources.yaml"])
      await copyFile(join(SAMPLES, name), join(s.dir, name));
    const names = ["sap-invoices-de.csv", "erp-export.json", "invoices-eu.csv"];
    const checked = await check(
      s,
      names.map((n) => join(s.dir, n)),
      ["--show", "100"],
    );
    expect(checked.code, checked.stderr).toBe(2);
    expect(await readdir(s.dir)).toEqual(expect.arrayContaining(names)); // only read, never claimed
    const [sap, erp, eu] = checked.files;
    expect(sap).toMatchObject({
      profile: 'sources.yaml, profile 1 ("sap-*.csv")',
      encoding: { name: "windows-1252", by: "profile" },
      delimiter: { value: ";", detected: false },
      header: { line: 2 },
      rows: 6,
      valid: 5,
      rejected: 1,
    });
    expect(erp).toMatchObject({
      profile: 'sources.yaml, profile 2 ("erp-*.json")',
      format: "json",
      rows: 4,
      valid: 3,
    });
    expect(eu).toMatchObject({
      profile: null,
      encoding: { name: "utf-8", by: "byte-order-mark" },
      delimiter: { value: ",", detected: true },
    });

    const run = await cli(["run"], s.env);
    expect(run.code, run.stderr).toBe(2);
    const reports = await readReports(s.dir);
    for (const [i, name] of names.entries()) {
      const c = checked.files[i];
      const rows = reports.get(name)?.rows ?? [];
      expect(rows.filter((r) => r.status === "rejected").map((r) => [r.line, r.error])).toEqual(
        c?.errors.map((e) => [e.line, e.error]),
      );
      expect(rows.filter((r) => r.status === "succeeded").map((r) => [r.line, r.idempotency_key])).toEqual(
        c?.documents.map((d) => [d.line, d.idempotency_key]),
      );
      expect(rows).toHaveLength(c?.rows ?? -1);
    }
  });

  it("when a file cannot be used, then check exits 1 with the reason run gives when it moves the file to rejected/", async () => {
    const s = await opsSetup();
    setups.push(s);
    // Windows-1252 bytes without a profile saying so: not UTF-8
    await writeFile(
      join(s.dir, "latin.csv"),
      Buffer.from(
        "external_id,currency,destination_country,archive_policy\nM\xfcller-1,EUR,DE,eu-10y\n",
        "latin1",
      ),
    );
    const checked = await check(s, [join(s.dir, "latin.csv")]);
    expect(checked.code).toBe(1);
    const reason = checked.files[0]?.file_error ?? "";
    expect(reason).toContain("encoding:");
    const run = await cli(["run"], s.env);
    expect(run.code).toBe(2);
    expect(await readdir(join(s.dir, "rejected"))).toHaveLength(1);
    const summary = z
      .object({ file_error: z.string() })
      .parse([...(await readReports(s.dir)).values()][0]?.summary);
    expect(summary.file_error).toBe(reason);
  });

  it("when every row is valid, then check exits 0; with a broken profiles file it exits 1 naming the profile and field", async () => {
    const s = await opsSetup();
    setups.push(s);
    await writeFile(
      join(s.dir, "good.csv"),
      "external_id;currency;destination_country;archive_policy\nG-1;EUR;DE;eu-10y\n",
    );
    const good = await check(s, [join(s.dir, "good.csv")]);
    expect(good.code, good.stderr).toBe(0);
    expect(good.files[0]).toMatchObject({ rows: 1, valid: 1, delimiter: { value: ";", detected: true } });
    await writeFile(join(s.dir, "broken.yaml"), 'profiles:\n  - match: "*.csv"\n    encoding: ebcdic\n');
    const broken = await cli(
      ["check", "--sources", join(s.dir, "broken.yaml"), join(s.dir, "good.csv")],
      s.env,
    );
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('broken.yaml, profile 1 ("*.csv")');
    expect(broken.stderr).toContain("encoding");
  });

  it("when a CSV file's lines end with CR alone (Excel's CSV (Macintosh)) or mix CR, LF and CRLF, then check reads every row at its line", async () => {
    const s = await opsSetup();
    setups.push(s);
    const header = "external_id;currency;destination_country;archive_policy";
    await writeFile(join(s.dir, "mac.csv"), `${header}\rM-1;EUR;DE;eu-10y\rM-2;EUR;FR;eu-10y\r`);
    await writeFile(
      join(s.dir, "mixed.csv"),
      `${header}\r\nX-1;EUR;DE;eu-10y\rX-2;EUR;DE;eu-10y\nX-3;EUR;DE;x\n`,
    );
    const checked = await check(s, [join(s.dir, "mac.csv"), join(s.dir, "mixed.csv")]);
    expect(checked.code, checked.stderr).toBe(2);
    expect(checked.files[0]).toMatchObject({ rows: 2, valid: 2, rejected: 0, header: { line: 1 } });
    expect(checked.files[1]).toMatchObject({ rows: 3, valid: 2, rejected: 1 });
    expect(checked.files[1]?.errors.map((e) => [e.line, e.external_id])).toEqual([[4, "X-3"]]);
  });

  it("when a file has 100,000 columns, then check lists the mapped ones and the first 20 ignored ones and says how many it left out", async () => {
    const s = await opsSetup();
    setups.push(s);
    const extra = Array.from({ length: 99_996 }, (_, i) => `x${i}`);
    const header = ["external_id", "currency", "destination_country", "archive_policy", ...extra];
    const row = ["W-1", "EUR", "DE", "eu-10y", ...extra.map(() => "")];
    await writeFile(join(s.dir, "wide.csv"), `${header.join(",")}\n${row.join(",")}\n`);
    const env = { ...s.env, REDIS_URL: "redis://127.0.0.1:9", INVOICE_API_URL: "http://127.0.0.1:9" };
    const text = await cli(["check", join(s.dir, "wide.csv")], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("x19 → (ignored) … and 99,976 more ignored columns");
    expect(text.stdout).toContain("unknown fields x0, x1,");
    expect(text.stdout).toContain("x19 … and 99,976 more");
    expect(text.stdout).not.toContain("x20,");
    expect(text.stdout.length).toBeLessThan(5_000);
    const json = await check(s, [join(s.dir, "wide.csv")]);
    expect(json.files[0]?.header?.columns).toHaveLength(24);
    expect(json.files[0]?.header?.columns_left_out).toBe(99_976);
    expect(json.files[0]?.unknown_fields).toEqual(extra.slice(0, 20));
    expect(json.files[0]?.unknown_fields_left_out).toBe(99_976);
  });
});
