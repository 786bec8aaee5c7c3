/**
 * The anchor GitHub gives a heading (github-slugger): its text as rendered (code spans, emphasis and
 * links reduced to their text), lower-cased, without punctuation or symbols (letters, marks, digits,
 * `_`, `-` and spaces stay), spaces turned into `-`; a repeated slug gets `-1`, `-2`, ….
 */
export function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const [, heading] of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = (heading ?? "")
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .replace(/[`*]/g, "")
      .replace(/(^|\s)_+|_+(\s|$)/g, "$1$2");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of withoutFences.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id ?? "");
  return anchors;
}
