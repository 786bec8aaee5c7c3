import { describe, expect, it } from "vitest";
import { admitName, fileName, isRefused, MAX_NAME_BYTES } from "../../src/names/file-name.js";
import { escapedText, shownName } from "../../src/names/shown-text.js";

function problemOf(raw: string | Buffer): string | undefined {
  const verdict = admitName(raw);
  return isRefused(verdict) ? verdict.problem : undefined;
}

describe("a file name from outside", () => {
  it("when it is empty, `.`, `..`, or holds `/` or NUL, then it is not one path segment and never a FileName", () => {
    for (const raw of ["", ".", "..", "a/b.csv", "../x.csv", "/etc/x.csv", "a/", "nul\0.csv"]) {
      expect(fileName(raw), JSON.stringify(raw)).toBeUndefined();
      expect(problemOf(raw), JSON.stringify(raw)).toBe("not-one-segment");
    }
  });

  it("when it holds a backslash, a line break, a bidi control or only dots beyond two, then on Linux it is one segment and taken", () => {
    for (const raw of ["back\\slash.csv", "line\nbreak.csv", "bidi\u202Ecsv.csv", "...", ".hidden.csv"])
      expect(admitName(raw), JSON.stringify(raw)).toBe(raw);
  });

  it("when it is longer than MAX_NAME_BYTES in UTF-8, then it is refused as too long; at the limit it is taken", () => {
    const at = `${"a".repeat(MAX_NAME_BYTES - 7)}日.csv`;
    expect(Buffer.byteLength(at)).toBe(MAX_NAME_BYTES);
    expect(admitName(at)).toBe(at);
    expect(problemOf(`a${at}`)).toBe("too-long");
  });

  it("when its bytes are not UTF-8, or a listing decoded them to U+FFFD, then it is refused and shown with its bytes", () => {
    const bytes = Buffer.concat([Buffer.from("loc"), Buffer.from([0xff]), Buffer.from("al.csv")]);
    const verdict = admitName(bytes);
    expect(isRefused(verdict) && verdict.problem).toBe("not-text");
    expect(isRefused(verdict) && verdict.shown).toBe('"loc\\xffal.csv"');
    expect(problemOf("bad\uFFFDname.csv")).toBe("not-text");
    expect(admitName(Buffer.from("\uFEFFbom.csv"))).toBe("\uFEFFbom.csv");
  });

  it("when its bytes are valid UTF-8 that spells U+FFFD, then it is taken; when a listing gave it as text, then the refusal says what U+FFFD stands for, not that it is not UTF-8", () => {
    expect(admitName(Buffer.from("Rechnung-\uFFFD.csv"))).toBe("Rechnung-\uFFFD.csv");
    const verdict = admitName("Rechnung-\uFFFD.csv");
    expect(isRefused(verdict) && verdict.why).toBe(
      "holds U+FFFD (\uFFFD), which stands for bytes that are not UTF-8 where the name came from (an SFTP " +
        "listing, a command line), so the file cannot be named back; rename it to a UTF-8 name without that character",
    );
  });
});

describe("a name printed for a person", () => {
  it("when it holds nothing a terminal acts on, then it is printed as it is", () => {
    for (const name of ["invoices.csv", "back\\slash.csv", `quo"te.csv`, "日本.csv", "emoji😀.ndjson"])
      expect(shownName(name)).toBe(name);
  });

  it('when it holds a control or bidi character, then it is quoted with those, `\\` and `"` escaped', () => {
    expect(shownName("line\nbreak.csv")).toBe('"line\\nbreak.csv"');
    expect(shownName("a\\b\u202E\t.csv")).toBe('"a\\\\b\\u202e\\t.csv"');
    expect(shownName('"quoted".csv')).toBe('"\\"quoted\\".csv"');
    expect(shownName("esc\u001b[31mred.csv")).toBe('"esc\\u001b[31mred.csv"');
    expect(shownName("sep\u2028.csv")).toBe('"sep\\u2028.csv"');
  });

  it("when a message quotes a name, then its line breaks and bidi controls are escaped in place", () => {
    expect(escapedText("file a\nb\u2066.csv left")).toBe("file a\\nb\\u2066.csv left");
  });
});
