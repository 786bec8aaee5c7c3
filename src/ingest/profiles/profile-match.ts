import picomatch from "picomatch";
import { formatOf, type FileFormat } from "../read-invoice-file.js";
import type { SourceProfile } from "./source-profile.js";

type Matcher = (name: string) => boolean;

// Case-sensitive, as the file system of the drop folder is; a leading dot is matched like any character.
const OPTIONS: picomatch.PicomatchOptions = { dot: true, nocase: false };
const matchers = new WeakMap<SourceProfile, Matcher>();

/**
 * What makes a `match` unusable, worded for the operator, or undefined when it is a glob that can match
 * a file name: not empty, no folder part (it is matched on the name alone), and something picomatch
 * compiles into a pattern that can match at all.
 */
export function globProblem(glob: string): string | undefined {
  const example = 'write a glob on the file name such as "sap-*.csv"';
  if (glob.trim() === "") return `is empty; ${example}`;
  if (glob.includes("/"))
    return `"${glob}" has a folder part, but it is matched on the file's name alone; ${example}`;
  let pattern: RegExp;
  try {
    pattern = picomatch.makeRe(glob, OPTIONS);
  } catch (thrown) {
    return `"${glob}" is not a glob (${thrown instanceof Error ? thrown.message : String(thrown)}); ${example}`;
  }
  // picomatch compiles what can never match (an unclosed brace, for one) to this.
  if (pattern.source === "$^")
    return `"${glob}" can match no file name (an unclosed "{" or "["?); ${example}`;
  return undefined;
}

function matcherOf(profile: SourceProfile): Matcher {
  let matcher = matchers.get(profile);
  if (matcher === undefined) {
    matcher = picomatch(profile.match, OPTIONS);
    matchers.set(profile, matcher);
  }
  return matcher;
}

/**
 * The profile a drop file is read with: the first whose `match` matches `name`, the name the file was
 * dropped under (a claimed file's `ClaimedFile.name`, never its name in processing/, which starts with
 * the batch id). Undefined when none matches or there are no profiles.
 */
export function profileFor(
  profiles: readonly SourceProfile[] | undefined,
  name: string,
): SourceProfile | undefined {
  return profiles?.find((profile) => matcherOf(profile)(name));
}

/** The format a drop file is read as: its profile's `format`, else its extension's, else CSV. */
export function formatFor(name: string, profile: SourceProfile | undefined): FileFormat {
  return profile?.format ?? formatOf(name) ?? "csv";
}
