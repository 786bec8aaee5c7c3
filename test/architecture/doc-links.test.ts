import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { headingAnchors } from "../support/heading-anchors.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** The pages a reader starts from: the README and every page of docs/. */
async function pages(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, "docs")))
    .filter((n) => n.endsWith(".md"))
    .map((n) => join(ROOT, "docs", n));
  return [join(ROOT, "README.md"), ...docs];
}

/** Markdown without what is not rendered as links: fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** The places a citation may name: every heading's text and every bold label, lower-cased. */
function citablePlaces(markdown: string): string[] {
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  const headings = [...text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)].map((m) => m[1] ?? "");
  const labels = [...text.matchAll(/\*\*([^*\n]+)\*\*/g)].map((m) => m[1] ?? "");
  return [...headings, ...labels].map((place) => place.replace(/[`*]/g, "").toLowerCase());
}

/**
 * Citations in prose, `docs/ledger.md, "Retention"` (a file, then the words a heading or a bold label
 * begins with), as the code's comments cite the docs too.
 */
function citations(markdown: string): { file: string; place: string }[] {
  return [...markdown.matchAll(/([\w./-]+\.md)`?, "([^"]+)"/g)].map((m) => ({
    file: m[1] ?? "",
    place: m[2] ?? "",
  }));
}

/** What is wrong with a citation from `page`: its file (from the page's folder or the root) or its place. */
async function brokenCitation(page: string, file: string, place: string): Promise<string | undefined> {
  const path = [resolve(dirname(page), file), resolve(ROOT, file)].find((p) => existsSync(p));
  if (path === undefined) return "no such file";
  const wanted = place.toLowerCase();
  return citablePlaces(await readFile(path, "utf8")).some((p) => p.startsWith(wanted))
    ? undefined
    : "no heading or bold label begins so";
}

/** The relative links of a page: `[text](target)`, images included, and reference definitions. */
function relativeLinks(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? "");
  const defined = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm)].map((m) => m[1] ?? "");
  return [...inline, ...defined].filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with `target` as linked from `page`: a file that is not there, an anchor no heading has. */
async function brokenLink(page: string, target: string): Promise<string | undefined> {
  const [path = "", anchor] = target.split("#", 2);
  const file = path === "" ? page : resolve(dirname(page), decodeURIComponent(path));
  if (!existsSync(file)) return "no such file";
  if (anchor === undefined || anchor === "") return undefined;
  if (!file.endsWith(".md")) return "an anchor into a file that is not Markdown";
  const anchors = headingAnchors(await readFile(file, "utf8"));
  return anchors.has(decodeURIComponent(anchor)) ? undefined : `no heading has the anchor #${anchor}`;
}

describe("the links of README.md and docs/", () => {
  it("when GitHub makes a heading's anchor, then the slug here is the same", () => {
    const anchors = headingAnchors(
      [
        "# Against a rate-limited service",
        "## Capacity (`npm run bench:capacity`)",
        "## What happens to a file",
        "## What happens to a file",
        "### `SUBMIT_RATE_PER_SEC`, é and 429s!",
        "```",
        "# not a heading",
        "```",
      ].join("\n"),
    );
    expect([...anchors]).toEqual([
      "against-a-rate-limited-service",
      "capacity-npm-run-benchcapacity",
      "what-happens-to-a-file",
      "what-happens-to-a-file-1",
      "submit_rate_per_sec-é-and-429s",
    ]);
  });

  it("when a page links a file or a heading of the repository, then the file is there and has that heading", async () => {
    const broken: string[] = [];
    for (const page of await pages())
      for (const target of relativeLinks(await readFile(page, "utf8"))) {
        const why = await brokenLink(page, target);
        if (why !== undefined) broken.push(`${relative(ROOT, page)}: (${target}) ${why}`);
      }
    expect(broken).toEqual([]);
  });

  it("when a page cites a file and a heading in words, then the file has a heading (or bold label) that begins so", async () => {
    const broken: string[] = [];
    for (const page of await pages())
      for (const { file, place } of citations(await readFile(page, "utf8"))) {
        const why = await brokenCitation(page, file, place);
        if (why !== undefined) broken.push(`${relative(ROOT, page)}: ${file}, "${place}": ${why}`);
      }
    expect(broken).toEqual([]);
  });
});
