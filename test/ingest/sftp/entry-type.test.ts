import { describe, expect, it } from "vitest";
import { entryType } from "../../../src/ingest/sftp/sftp-requests.js";

describe("the kind of a listed SFTP entry", () => {
  it("when the long name is in ls -l form, then its first letter tells: file, folder, link, anything else other", () => {
    expect(entryType("-rw-r--r--    1 u g 10 Dec  1 00:00 a.csv", 0o100644)).toBe("file");
    expect(entryType("drwxr-xr-x    2 u g 40 Dec  1 00:00 in", 0o040755)).toBe("folder");
    expect(entryType("lrwxrwxrwx    1 u g  5 Dec  1 00:00 l.csv -> a.csv", undefined)).toBe("link");
    expect(entryType("prw-r--r--    1 u g  0 Dec  1 00:00 p.csv", undefined)).toBe("other");
  });

  it("when the long name is bare, then the mode tells; with no mode either (SFTP v3 allows it), a file whose listing says nothing more", () => {
    expect(entryType("a.csv", 0o100644)).toBe("file");
    expect(entryType("in", 0o040755)).toBe("folder");
    expect(entryType("fifo.csv", 0o010644)).toBe("other");
    expect(entryType("bare.csv", undefined)).toBe("file");
    expect(entryType("", undefined)).toBe("file");
  });
});
