import type { StatusReport } from "./status-report.js";

/** `status`'s lines on the export to PostgreSQL: the database, and the outbox's backlog. Pure. */
export function exportLines(report: StatusReport): string[] {
  const { outbox } = report;
  const db = report.results_database;
  if (db === null && !outbox.on && outbox.entries === 0 && outbox.refused === 0) return [];
  const lines: string[] = [];
  if (db !== null)
    lines.push(
      `results database       ${db.url} ${db.answers ? "answers" : `DOES NOT ANSWER (${db.problem ?? "no reason given"})`}`,
    );
  const oldest =
    outbox.oldest_age_seconds === null
      ? "empty"
      : `oldest ${age(outbox.oldest_age_seconds)} old (${outbox.oldest_at ?? ""})`;
  lines.push(
    `outbox to PostgreSQL   ${outbox.on ? "on" : "off"}, ${outbox.entries} event(s) not exported yet, ${oldest}`,
  );
  if (outbox.refused > 0)
    lines.push(
      `refused by PostgreSQL  ${outbox.refused} event(s) kept aside in the outbox-refused stream: ` +
        'see docs/results-of-record.md, "Events PostgreSQL refuses"',
    );
  return lines;
}

function age(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}
