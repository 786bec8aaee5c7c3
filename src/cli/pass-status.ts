import { spokenDuration } from "../config/duration.js";
import type { PassRecord } from "../ledger/passes.js";
import { leftFileText } from "../names/file-name.js";
import { escapedText } from "../names/shown-text.js";

/** A pass as `status --json` shows it (src/cli/status-report.ts says what each field is). */
export interface PassStatus {
  readonly id: string;
  readonly kind: PassRecord["kind"];
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly files: number;
  readonly invoices: PassRecord["invoices"];
  readonly refused: number | null;
  readonly busiest_second: number | null;
  readonly learned_rate: number | null;
  readonly exit_code: number | null;
  readonly left: readonly { readonly where: string; readonly file: string; readonly why: string }[];
  readonly left_out: number;
  /** Its process stopped without recording its end (killed): exit_code is 1, ended_at its last sign. */
  readonly ended_without_word: boolean;
}

export function passStatus(p: PassRecord): PassStatus {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    id: p.id,
    kind: p.kind,
    started_at: new Date(p.startedAt).toISOString(),
    ended_at: iso(p.endedAt),
    files: p.batches.length,
    invoices: p.invoices,
    refused: p.refused ?? null,
    busiest_second: p.busiestSecond ?? null,
    learned_rate: p.learnedRate ?? null,
    exit_code: p.exitCode ?? null,
    left: (p.left ?? []).map((f) => ({ where: f.where, file: f.shown, why: f.why })),
    left_out: p.leftOut ?? 0,
    ended_without_word: p.endedWithoutWord === true,
  };
}

/** How many files left where they are `status` names per pass: the console's pass page has them all. */
const LEFT_SHOWN = 5;

/** Each pass's files left where they are, one line each: `pass …: drop folder: x.csv left in …`. */
export function passLeftLines(passes: readonly PassStatus[]): string[] {
  return passes.flatMap((p) => {
    const more = p.left.length - LEFT_SHOWN + p.left_out;
    return [
      ...p.left
        .slice(0, LEFT_SHOWN)
        .map(
          (f) => `pass ${p.id}: ${escapedText(leftFileText({ where: f.where, shown: f.file, why: f.why }))}`,
        ),
      ...(more > 0 ? [`pass ${p.id}: … and ${more} more file(s) left (the console's /passes/${p.id})`] : []),
    ];
  });
}

/** The last passes: when, how long, what they came to. */
export function passTable(passes: readonly PassStatus[]): string {
  const header = [
    "pass",
    "kind",
    "started",
    "took",
    "files",
    "refused",
    "busiest second",
    "exit",
    "invoices",
  ];
  const rows = passes.map((p) => [
    p.id,
    p.kind,
    p.started_at.replace(/\.\d+Z$/, "Z"),
    p.ended_at === null ? "running" : spokenDuration(Date.parse(p.ended_at) - Date.parse(p.started_at)),
    String(p.files),
    p.refused === null ? "-" : String(p.refused),
    p.busiest_second === null ? "-" : `${p.busiest_second} requests`,
    p.exit_code === null
      ? "-"
      : `${p.exit_code}${p.ended_without_word ? ` (ended without a word, last heard at ${p.ended_at?.slice(11, 19) ?? "?"} UTC)` : ""}`,
    Object.entries(p.invoices)
      .map(([status, n]) => `${n} ${status}`)
      .join(", "),
  ]);
  const last = header.length - 1;
  const widths = header.map((h, i) =>
    i === last ? 0 : Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)),
  );
  const format = (cells: readonly string[]) =>
    cells.map((c, i) => (i === last ? c : c.padEnd(widths[i] ?? 0))).join("  ");
  return [format(header), ...rows.map(format)].join("\n");
}
