import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { basename, extname } from "node:path";
import { coerceError } from "../errors/relay-error.js";
import type { KeyNamespace } from "../invoice/key.js";
import { decodeText, type EncodingChoice } from "./decode/decode-text.js";
import { FileDedupe } from "./file-dedupe.js";
import { keyItems, type KeyingContext } from "./keyed-items.js";
import type { RawItem } from "./raw-item.js";
import type { ReadItem } from "./read-item.js";
import { readCsv, type CsvHeaderInfo } from "./readers/csv.js";
import { readJson } from "./readers/json.js";
import { readNdjson } from "./readers/ndjson.js";
import type { SourceProfile } from "./profiles/source-profile.js";
import { UnreadableFileError } from "./unreadable-file-error.js";
import type { FileFormat } from "../ledger/statuses.js";

export type { FileFormat };

const FORMATS: ReadonlyMap<string, FileFormat> = new Map<string, FileFormat>([
  [".csv", "csv"],
  [".json", "json"],
  [".ndjson", "ndjson"],
  [".jsonl", "ndjson"],
]);

/** The format a drop file is read as, from its extension (case-insensitive); undefined if not a drop file. */
export function formatOf(path: string): FileFormat | undefined {
  return FORMATS.get(extname(path).toLowerCase());
}

export interface ReadOptions {
  readonly namespace: KeyNamespace;
  /** Overrides the format taken from the file name. */
  readonly format?: FileFormat;
  /** Name used in messages; defaults to the file's base name. */
  readonly displayName?: string;
  /** Bytes to read from the start (those claimed); a writer's later appends are never read. */
  readonly length?: number | undefined;
  /** Those bytes, when the claim already read them (a file of one read chunk): read from here, not the disk. */
  readonly bytes?: Uint8Array | undefined;
  /** The source profile matched by the file's name, if any (src/ingest/profiles/source-profile.ts). */
  readonly profile?: SourceProfile | undefined;
  /** Called once a CSV file's header is accepted: its delimiter (detected or the profile's), line, columns. */
  readonly onCsvHeader?: ((header: CsvHeaderInfo) => void) | undefined;
  /** Called before any record with the encoding the file is decoded with and what chose it. */
  readonly onEncoding?: ((choice: EncodingChoice) => void) | undefined;
}

const READ_CHUNK_BYTES = 16 * 1024;

/** The file's bytes, or its first `length` of them. */
function fileSource(path: string, length: number | undefined, bytes?: Uint8Array): AsyncIterable<Uint8Array> {
  if (length === 0) return (async function* () {})();
  if (bytes !== undefined) return oneChunk(bytes);
  // Claimed bytes that fit in one chunk are read with one call: a stream's machinery costs a file of
  // one invoice (an ERP's file per invoice) many times what reading it does.
  if (length !== undefined && length <= READ_CHUNK_BYTES) return readOnce(path, length);
  return createReadStream(path, {
    highWaterMark: READ_CHUNK_BYTES,
    ...(length === undefined ? {} : { start: 0, end: length - 1 }),
  });
}

/** Bytes in memory as a source: a generator, cheaper than a stream for the one chunk. */
function oneChunk(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  const chunks = [bytes][Symbol.iterator]();
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve(chunks.next()) }) };
}

/** The first `length` bytes of a file (fewer if it is shorter), as one chunk. */
async function* readOnce(path: string, length: number): AsyncGenerator<Uint8Array> {
  const handle = await open(path, "r");
  try {
    const bytes = Buffer.alloc(length);
    let read = 0;
    for (let got = -1; got !== 0 && read < length; read += got)
      got = (await handle.read(bytes, read, length - read, read)).bytesRead;
    if (read > 0) yield bytes.subarray(0, read);
  } finally {
    await handle.close();
  }
}

/** Reads a drop file from disk. */
export function readInvoiceFile(path: string, options: ReadOptions): AsyncGenerator<ReadItem> {
  const source = fileSource(path, options.length);
  return readInvoices(source, { displayName: basename(path), format: formatOf(path) ?? "csv", ...options });
}

/**
 * Turns the bytes of one drop file into validated, keyed records. It never throws: a file that cannot be
 * read as a whole ends the sequence with a `file-error` item.
 */
export async function* readInvoices(
  source: AsyncIterable<Uint8Array>,
  options: SourceOptions,
): AsyncGenerator<ReadItem> {
  for await (const batch of readInvoiceBatches(source, options)) yield* batch;
}

/** Reads a drop file from disk, a batch of records per chunk read. */
export function readInvoiceFileBatches(path: string, options: ReadOptions): AsyncGenerator<ReadItem[]> {
  const source = fileSource(path, options.length, options.bytes);
  return readInvoiceBatches(source, {
    displayName: basename(path),
    format: formatOf(path) ?? "csv",
    ...options,
  });
}

/** The format reader's records, before normalisation and keys. */
function rawRecords(
  source: AsyncIterable<Uint8Array>,
  format: FileFormat,
  file: string,
  unknown: Set<string>,
  { profile, onCsvHeader, onEncoding }: Pick<ReadOptions, "profile" | "onCsvHeader" | "onEncoding">,
): AsyncGenerator<RawItem[]> {
  const text = decodeText(file, source, profile, onEncoding);
  if (format === "csv") {
    const onUnknownColumns = (names: readonly string[]): void => {
      for (const n of names) unknown.add(n);
    };
    return readCsv(file, text, { profile, onUnknownColumns, onHeader: onCsvHeader });
  }
  return format === "json" ? readJson(file, text, profile) : readNdjson(file, text, profile);
}

/**
 * Whether a file can be used as a whole (text in its encoding throughout, CSV header, JSON syntax to the
 * end), checked without normalising or keying its records: the cheap first pass before anything is sent.
 */
export async function findFileError(
  path: string,
  options: Omit<SourceOptions, "namespace">,
): Promise<UnreadableFileError | undefined> {
  const raw = rawRecords(
    fileSource(path, options.length, options.bytes),
    options.format,
    options.displayName,
    new Set(),
    options,
  );
  try {
    // The records themselves are not needed: the readers throw on whatever makes a file unusable.
    while (!(await raw.next()).done);
    return undefined;
  } catch (thrown) {
    return thrown instanceof UnreadableFileError
      ? thrown
      : new UnreadableFileError(options.displayName, `could not be read: ${coerceError(thrown).message}`);
  } finally {
    await raw.return(undefined);
  }
}

type SourceOptions = ReadOptions & { readonly format: FileFormat; readonly displayName: string };

/** The same records in arrays, one per chunk of input: the hot path awaits once per chunk, not per row. */
async function* readInvoiceBatches(
  source: AsyncIterable<Uint8Array>,
  options: SourceOptions,
): AsyncGenerator<ReadItem[]> {
  const { displayName: file, namespace } = options;
  const context: KeyingContext = { namespace, dedupe: new FileDedupe(), unknown: new Set() };
  const raw = rawRecords(source, options.format, file, context.unknown, options);
  try {
    for await (const items of raw) yield keyItems(items, context);
    if (context.unknown.size > 0) yield [{ kind: "unknown-fields", names: [...context.unknown] }];
  } catch (thrown) {
    const error =
      thrown instanceof UnreadableFileError
        ? thrown
        : new UnreadableFileError(file, `could not be read: ${coerceError(thrown).message}`);
    yield [{ kind: "file-error", error }];
  } finally {
    await raw.return(undefined);
  }
}
