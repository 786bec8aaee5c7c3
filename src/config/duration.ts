/** Parses a duration such as `90s`, `45m`, `6h`, `1h30m` or a number of milliseconds. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const pattern = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let consumed = 0;
  for (const match of trimmed.matchAll(pattern)) {
    if (match.index !== consumed) return undefined;
    total += Number(match[1]) * (units[match[2] ?? ""] ?? 0);
    consumed += match[0].length;
  }
  return consumed === trimmed.length && consumed > 0 ? Math.round(total) : undefined;
}

/** A duration in the largest whole unit that fits (`7d`, `36h`, `90s`, `1500ms`): how settings show it. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** A duration as people read it, to the second: `45 s`, `14 min 30 s`, `2 h 5 min`. */
export function spokenDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
