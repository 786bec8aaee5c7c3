import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SourceProfileError } from "../../../src/ingest/profiles/errors/source-profile-error.js";
import { SourcesFileMissingError } from "../../../src/ingest/profiles/errors/sources-file-missing-error.js";
import { SourcesSyntaxError } from "../../../src/ingest/profiles/errors/sources-syntax-error.js";
import { loadProfiles, parseProfiles } from "../../../src/ingest/profiles/load-profiles.js";
import { ENCODINGS } from "../../../src/ingest/profiles/source-profile.js";

/** The example of docs/configuration.md, "Source profiles". */
const EXAMPLE = `profiles:
  - match: "sap-*.csv"            # glob on the file name; first match wins
    delimiter: ";"
    encoding: windows-1252
    header_row: 2                 # 1-based line of the header; lines above it are skipped
    columns: { Rechnungsnummer: external_id, "Währung": currency, Land: destination_country }
    defaults: { archive_policy: eu-10y }
    values: { destination_country: { Deutschland: DE, Frankreich: FR } }
`;

const EMPTY_PROFILE =
  'profile 2, field match (line 3): is required: the profile is empty; write at least match: "<glob on the file name>"';

/** A file with one good profile first, so that the broken one is profile 2. */
const withSecond = (profile: string) => `profiles:\n  - match: "*.json"\n${profile}`;

/** The SourceProfileError that `text` is refused with, as sources.yaml. */
function refusal(text: string): SourceProfileError {
  try {
    parseProfiles(text, "sources.yaml");
  } catch (error) {
    if (error instanceof SourceProfileError) return error;
    throw error;
  }
  throw new Error("the file was accepted");
}

describe("loading source profiles", () => {
  it("when the file is the documented example, then it loads as one profile named by file, number and match", () => {
    const [profile, ...rest] = parseProfiles(EXAMPLE, "/etc/invoice-relay/sources.yaml");
    expect(rest).toEqual([]);
    expect(profile).toEqual({
      name: 'sources.yaml, profile 1 ("sap-*.csv")',
      match: "sap-*.csv",
      delimiter: ";",
      encoding: "windows-1252",
      headerRow: 2,
      columns: new Map([
        ["Rechnungsnummer", "external_id"],
        ["Währung", "currency"],
        ["Land", "destination_country"],
      ]),
      defaults: { archive_policy: "eu-10y" },
      values: new Map([
        [
          "destination_country",
          new Map([
            ["Deutschland", "DE"],
            ["Frankreich", "FR"],
          ]),
        ],
      ]),
    });
  });

  it("when the example of docs/configuration.md is loaded, then it is this same profile", async () => {
    const page = await readFile(new URL("../../../docs/configuration.md", import.meta.url), "utf8");
    const section = page.slice(page.indexOf("## Source profiles"));
    const example = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBe(EXAMPLE);
  });

  it("when values look like numbers or booleans, then they are kept as written, and aliases name canonical fields", () => {
    const [profile] = parseProfiles(
      withSecond(
        '  - match: "x-*.csv"\n    delimiter: "\\t"\n    quote: "\'"\n    format: csv\n' +
          "    columns: { invoice.number: external_id, Land: routing.destination_country }\n" +
          "    defaults: { schema_version: 2026-10-16, routing.archive_policy: eu-10y }\n" +
          "    values: { destination_country: { Norway: NO, 1.0: DE, yes: FR } }\n",
      ),
      "sources.yaml",
    ).slice(1);
    expect(profile).toMatchObject({
      name: 'sources.yaml, profile 2 ("x-*.csv")',
      format: "csv",
      delimiter: "\t",
      quote: "'",
      columns: new Map([
        ["invoice.number", "external_id"],
        ["Land", "destination_country"],
      ]),
      defaults: { schema_version: "2026-10-16", archive_policy: "eu-10y" },
      values: new Map([
        [
          "destination_country",
          new Map([
            ["Norway", "NO"],
            ["1.0", "DE"],
            ["yes", "FR"],
          ]),
        ],
      ]),
    });
  });

  it("when every encoding of the list is named, then each is accepted", () => {
    const text = `profiles:\n${ENCODINGS.map((e) => `  - match: "${e}.csv"\n    encoding: ${e}\n`).join("")}`;
    expect(parseProfiles(text, "sources.yaml").map((p) => p.encoding)).toEqual([...ENCODINGS]);
  });

  it("when the list is empty, then there are no profiles", () => {
    expect(parseProfiles("profiles: []\n", "sources.yaml")).toEqual([]);
  });
});

describe("refusing a source profiles file", () => {
  it("when the YAML is broken, then the error names the file and the line", () => {
    const error = (() => {
      try {
        parseProfiles(
          'profiles:\n  - match: "a.csv"\n    columns: { A: currency\n  - match: b\n',
          "sources.yaml",
        );
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(SourcesSyntaxError);
    expect((error as SourcesSyntaxError).code).toBe("SOURCES_FILE_SYNTAX");
    expect((error as SourcesSyntaxError).message).toMatch(/^sources\.yaml line [34]: not valid YAML: /);
  });

  it("when a key is given twice in one map, then the error names its line", () => {
    expect(() =>
      parseProfiles('profiles:\n  - match: "a.csv"\n    match: "b.csv"\n', "sources.yaml"),
    ).toThrow(/^sources\.yaml line 3: not valid YAML: Map keys must be unique/);
  });

  it("when a profile has an unknown field, then the error names the profile, the field and the right spelling", () => {
    const error = refusal(withSecond('  - match: "sap-*.csv"\n    headerRow: 2\n'));
    expect(error.code).toBe("SOURCE_PROFILE_INVALID");
    expect(error.message).toBe(
      'sources.yaml, profile 2 ("sap-*.csv"), field headerRow (line 4): is not a profile field; write header_row, ' +
        "or use only match, format, delimiter, quote, encoding, header_row, columns, defaults, values, report_encoding",
    );
  });

  it("when the file has a field besides profiles, then the error names that field", () => {
    expect(refusal("profiles: []\nprofile: []\n").message).toBe(
      "sources.yaml, field profile (line 2): is not a field of the file; it has two fields, profiles: a list of profiles, and sftp: a list of SFTP sources (docs/sftp.md)",
    );
  });

  it("when the encoding is unknown, then the error lists the valid ones", () => {
    expect(refusal(withSecond('  - match: "sap-*.csv"\n    encoding: ebcdic\n')).message).toBe(
      'sources.yaml, profile 2 ("sap-*.csv"), field encoding (line 4): "ebcdic" is not an encoding invoice-relay ' +
        "reads; one of utf-8, utf-16le, utf-16be, windows-1252, iso-8859-1, iso-8859-15",
    );
  });

  it("when the encoding is a common other name of a listed one, then the error says which to write", () => {
    expect(refusal(withSecond('  - match: "sap-*.csv"\n    encoding: latin1\n')).message).toContain(
      '"latin1" is not an encoding invoice-relay reads; write iso-8859-1, or one of utf-8,',
    );
  });

  it.each([
    ["delimiter", '";;"', '";;" is 2 characters; write one character such as ";"'],
    ["delimiter", '""', '"" is empty; write one character such as ";"'],
    [
      "delimiter",
      "'\\t'",
      "'\\t' is two characters, a backslash and a t; for a tab write \"\\t\" in double quotes",
    ],
    [
      "delimiter",
      '"\\n"',
      'must not be a line break, which ends a CSV record; write one character such as ";"',
    ],
    [
      "delimiter",
      '"\\r"',
      'must not be a line break, which ends a CSV record; write one character such as ";"',
    ],
    ["quote", '"\\n"', 'must not be a line break, which ends a CSV record; write one character such as "\'"'],
    ["quote", '"\\r"', 'must not be a line break, which ends a CSV record; write one character such as "\'"'],
    ["quote", "\"''\"", '"\'\'" is 2 characters; write one character such as "\'"'],
    ["delimiter", "[a]", 'must be one character such as ";", not a list'],
  ])("when %s is %s, then the error asks for one character", (field, value, problem) => {
    expect(refusal(withSecond(`  - match: "sap-*.csv"\n    ${field}: ${value}\n`)).message).toBe(
      `sources.yaml, profile 2 ("sap-*.csv"), field ${field} (line 4): ${problem}`,
    );
  });

  it("when the delimiter and the quote are the same character, then the error names the quote", () => {
    expect(refusal(withSecond('  - match: "sap-*.csv"\n    delimiter: ";"\n    quote: ";"\n')).message).toBe(
      'sources.yaml, profile 2 ("sap-*.csv"), field quote (line 5): is ";", the same character as delimiter; ' +
        'write another quote, such as "\\""',
    );
  });

  it("when the delimiter is a double quote and no quote is set, then the error names the delimiter", () => {
    expect(refusal(withSecond('  - match: "sap-*.csv"\n    delimiter: \'"\'\n')).message).toBe(
      'sources.yaml, profile 2 ("sap-*.csv"), field delimiter (line 4): is "\\"", the quote character when quote ' +
        'is not set; write another delimiter, or set another quote such as "\'"',
    );
  });

  it.each(["0", "-1", "2.5", "two", '""'])(
    "when header_row is %s, then the error asks for a positive whole number",
    (value) => {
      expect(refusal(withSecond(`  - match: "sap-*.csv"\n    header_row: ${value}\n`)).message).toMatch(
        /^sources\.yaml, profile 2 \("sap-\*\.csv"\), field header_row \(line 4\): ".*" is not a line number; write the 1-based line of the header, a whole number such as 2$/,
      );
    },
  );

  it("when two columns map to one canonical field, then the error names the second column and the first", () => {
    expect(
      refusal(
        withSecond(
          '  - match: "sap-*.csv"\n    columns:\n      Land: destination_country\n      Country: routing.destination_country\n',
        ),
      ).message,
    ).toBe(
      'sources.yaml, profile 2 ("sap-*.csv"), field columns.Country (line 6): maps to destination_country, as column ' +
        '"Land" does; a canonical field takes one column, so remove one of them',
    );
  });

  it("when one column is given twice in different case, then the error says columns ignore case", () => {
    expect(
      refusal(
        withSecond('  - match: "sap-*.csv"\n    columns: { Land: destination_country, " land": currency }\n'),
      ).message,
    ).toContain(
      'field columns[" land"] (line 4): is the same column as "Land" (columns are matched ignoring case',
    );
  });

  it("when a JSON profile maps a path and a path inside it, then the error names the inner one and says to remove the outer", () => {
    expect(
      refusal(
        withSecond(
          '  - match: "v-*.json"\n    format: json\n    columns:\n      Invoice: external_id\n      invoice.number: currency\n',
        ),
      ).message,
    ).toBe(
      'sources.yaml, profile 2 ("v-*.json"), field columns["invoice.number"] (line 7): is a JSON path inside "Invoice", ' +
        'which is mapped too; a mapped path must lead to a value, not to an object, so remove "Invoice"',
    );
  });

  it("when the object's path comes after the path inside it and the format is not set, then the error names the object's path and mentions format: csv", () => {
    expect(
      refusal(
        withSecond('  - match: "v-*"\n    columns: { invoice.number: external_id, " invoice ": currency }\n'),
      ).message,
    ).toBe(
      'sources.yaml, profile 2 ("v-*"), field columns[" invoice "] (line 4): is a JSON path to the object holding ' +
        '"invoice.number", which is mapped too; a mapped path must lead to a value, not to an object, so remove ' +
        '" invoice " (if the file is CSV, whose header names may hold dots, set format: csv)',
    );
  });

  it("when two JSON paths differ only in spaces around their segments, then the error says they are one path", () => {
    expect(
      refusal(
        withSecond(
          '  - match: "v-*.ndjson"\n    columns: { invoice.number: external_id, "Invoice . Number": currency }\n',
        ),
      ).message,
    ).toContain(
      'field columns["Invoice . Number"] (line 4): is the same JSON path as "invoice.number" (paths are matched ' +
        "segment by segment, ignoring case and surrounding spaces); keep one of them",
    );
  });

  it.each([
    ['"v-*.csv"', ""],
    ['"v-*"', "    format: csv\n"],
  ])(
    "when a CSV profile (match %s) maps a header and a dotted header starting with it, then both are kept",
    (glob, format) => {
      const [profile] = parseProfiles(
        withSecond(
          `  - match: ${glob}\n${format}    columns: { invoice: external_id, invoice.number: currency }\n`,
        ),
        "sources.yaml",
      ).slice(1);
      expect(profile?.columns).toEqual(
        new Map([
          ["invoice", "external_id"],
          ["invoice.number", "currency"],
        ]),
      );
    },
  );

  it.each([
    ["columns", "{ Währung: Currency }", 'columns["Währung"]', '"Currency" is not a canonical field'],
    ["defaults", "{ archive: eu-10y }", "defaults.archive", '"archive" is not a canonical field'],
    ["values", "{ country: { Deutschland: DE } }", "values.country", '"country" is not a canonical field'],
  ])(
    "when %s names an unknown canonical field, then the error lists the canonical fields",
    (field, value, path, problem) => {
      expect(refusal(withSecond(`  - match: "sap-*.csv"\n    ${field}: ${value}\n`)).message).toBe(
        `sources.yaml, profile 2 ("sap-*.csv"), field ${path} (line 4): ${problem}; write one of external_id, currency, ` +
          "schema_version, document_type, destination_country, archive_policy (routing.destination_country and " +
          "routing.archive_policy are accepted too)",
      );
    },
  );

  it("when defaults give one field under both of its names, then the error names the second", () => {
    expect(
      refusal(
        withSecond(
          '  - match: "sap-*.csv"\n    defaults: { archive_policy: eu-10y, routing.archive_policy: eu-1y }\n',
        ),
      ).message,
    ).toContain('field defaults["routing.archive_policy"] (line 4): is archive_policy again');
  });

  it("when a default or a mapped value is empty, then the error asks for a value", () => {
    const message = refusal(
      withSecond(
        '  - match: "sap-*.csv"\n    defaults: { currency: "" }\n    values: { currency: { Euro: " " } }\n',
      ),
    ).message;
    expect(message).toContain("field defaults.currency (line 4): is empty; write the value to use");
    expect(message).toContain("field values.currency.Euro (line 5): maps to nothing; write our value");
  });

  it.each([
    [
      "archive_policy: eu-10w",
      "defaults.archive_policy",
      '"eu-10w" is not valid for routing.archive_policy: must look like <region>-<retention>, e.g. eu-10y or ' +
        "us-east-7y (units y, m, d)",
    ],
    [
      "currency: EURO",
      "defaults.currency",
      '"EURO" is not valid for currency: must be an ISO 4217 currency code such as EUR or USD',
    ],
    [
      "routing.destination_country: GER",
      'defaults["routing.destination_country"]',
      '"GER" is not valid for routing.destination_country: must be an assigned ISO 3166-1 alpha-2 country code ' +
        "such as DE or US",
    ],
    [
      "document_type: Rechnung",
      "defaults.document_type",
      '"Rechnung" is not valid for document_type: must be "invoice" (or left empty)',
    ],
    [
      "schema_version: 2025-01-01",
      "defaults.schema_version",
      '"2025-01-01" is not valid for schema_version: unsupported version: only 2026-10-16 is supported',
    ],
  ])(
    "when a default (%s) fails its field's validation, then the error says what the field takes",
    (entry, path, problem) => {
      expect(refusal(withSecond(`  - match: "sap-*.csv"\n    defaults: { ${entry} }\n`)).message).toBe(
        `sources.yaml, profile 2 ("sap-*.csv"), field ${path} (line 4): ${problem}`,
      );
    },
  );

  it("when a mapped value (ours) fails its field's validation, then the error names the vendor's word and says what the field takes", () => {
    expect(
      refusal(
        withSecond(
          '  - match: "sap-*.csv"\n    values:\n      destination_country: { Deutschland: GER, Frankreich: FR }\n',
        ),
      ).message,
    ).toBe(
      'sources.yaml, profile 2 ("sap-*.csv"), field values.destination_country.Deutschland (line 5): "GER" is not ' +
        "valid for routing.destination_country: must be an assigned ISO 3166-1 alpha-2 country code such as DE or US",
    );
  });

  it("when defaults and mapped values are valid once normalised as a row's are, then they load as written", () => {
    const [profile] = parseProfiles(
      withSecond(
        '  - match: "sap-*.csv"\n    defaults: { currency: " eur", archive_policy: EU-10Y, destination_country: de }\n' +
          '    values: { currency: { Euro: eur }, document_type: { RE: " invoice" } }\n',
      ),
      "sources.yaml",
    ).slice(1);
    expect(profile?.defaults).toEqual({
      currency: "eur",
      archive_policy: "EU-10Y",
      destination_country: "de",
    });
    expect(profile?.values).toEqual(
      new Map([
        ["currency", new Map([["Euro", "eur"]])],
        ["document_type", new Map([["RE", "invoice"]])],
      ]),
    );
  });

  it.each([
    ["  -\n", EMPTY_PROFILE],
    ["  - {}\n", EMPTY_PROFILE],
    [
      '  - "sap-*.csv"\n',
      'profile 2 (line 3): must be a map of fields such as match: "sap-*.csv", not "sap-*.csv"',
    ],
    [
      '  - delimiter: ";"\n',
      'profile 2, field match (line 3): is required: a glob on the file name such as "sap-*.csv"',
    ],
  ])("when a profile of the list is empty or not a map (%j), then the error names it", (entry, expected) => {
    expect(refusal(withSecond(entry)).message).toBe(`sources.yaml, ${expected}`);
  });

  it.each([
    ['""', "is empty; write a glob on the file name"],
    ['"in/*.csv"', '"in/*.csv" has a folder part, but it is matched on the file\'s name alone'],
    ['"sap-{a,b.csv"', '"sap-{a,b.csv" can match no file name'],
  ])("when match is %s, then the error says why it is no usable glob", (glob, problem) => {
    const message = refusal(withSecond(`  - match: ${glob}\n`)).message;
    expect(message.startsWith(`sources.yaml, profile 2 (${glob}), field match (line 3): ${problem}`)).toBe(
      true,
    );
  });

  it("when a CSV-only field is set on a JSON profile, then the error says to remove it", () => {
    expect(refusal(withSecond('  - match: "x.json"\n    format: json\n    header_row: 2\n')).message).toBe(
      'sources.yaml, profile 2 ("x.json"), field header_row (line 5): applies to CSV files only, but format is json; ' +
        "remove it, or set format: csv",
    );
  });

  it("when the file is empty or profiles is no list, then the error shows the file's shape", () => {
    expect(refusal("").message).toMatch(
      /^sources\.yaml, field profiles: is missing: the file is empty; write a map/,
    );
    expect(refusal("profiles:\n").message).toMatch(
      /^sources\.yaml, field profiles \(line 1\): must be a list of profiles/,
    );
  });

  it("when several profiles are broken, then every problem is listed in the file's order", () => {
    const error = refusal(
      'profiles:\n  - match: "a.csv"\n    encoding: ebcdic\n  - match: "b.csv"\n    format: xml\n    quote: ab\n',
    );
    expect(error.problems.map((p) => [p.where, p.field, p.line])).toEqual([
      ['sources.yaml, profile 1 ("a.csv")', "encoding", 3],
      ['sources.yaml, profile 2 ("b.csv")', "format", 5],
      ['sources.yaml, profile 2 ("b.csv")', "quote", 6],
    ]);
    expect(error.message.split("\n")[0]).toBe("sources.yaml has 3 problems:");
  });
});

describe("reading a source profiles file", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "profiles-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("when the file is UTF-8 with a BOM, then it loads", async () => {
    const path = join(dir, "bom.yaml");
    await writeFile(path, `\uFEFF${EXAMPLE}`);
    expect((await loadProfiles(path)).map((p) => p.name)).toEqual(['bom.yaml, profile 1 ("sap-*.csv")']);
  });

  it("when the file is not there, then the error names SOURCES_FILE and the path", async () => {
    const path = join(dir, "missing.yaml");
    const error = await loadProfiles(path).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(SourcesFileMissingError);
    expect((error as Error).message).toBe(
      `SOURCES_FILE ${path} does not exist. Point SOURCES_FILE at the source profiles file ` +
        '(docs/configuration.md, "Source profiles"), or unset it to read files without profiles.',
    );
  });

  it("when the file is not UTF-8, then the error says to save it as UTF-8", async () => {
    const path = join(dir, "latin1.yaml");
    await writeFile(path, Buffer.from('profiles:\n  - match: "M\xfcller-*.csv"\n', "latin1"));
    await expect(loadProfiles(path)).rejects.toThrow(
      `${path}: not valid YAML: the file is not UTF-8 text; save it as UTF-8`,
    );
  });

  it("when a profile is broken, then the message names the file as configured", async () => {
    const path = join(dir, "sources.yaml");
    await writeFile(path, 'profiles:\n  - match: "sap-*.csv"\n    encoding: latin-9\n');
    await expect(loadProfiles(path)).rejects.toThrow(
      `${path}, profile 1 ("sap-*.csv"), field encoding (line 3): "latin-9" is not an encoding invoice-relay reads; write iso-8859-15`,
    );
  });
});
