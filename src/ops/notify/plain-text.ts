/**
 * Text that reads the same in a Slack and a Microsoft Teams incoming webhook: no line breaks, control
 * or bidi characters from the data (a file name cannot add lines or reorder them), `&`, `<` and `>` escaped (Slack reads `<…>`
 * as a link or mention; Teams shows the entities as the characters), and bounded.
 */
export function plain(value: string, maxChars = 200): string {
  const flat = value
    // eslint-disable-next-line no-control-regex -- control characters are what this removes
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g, " ")
    .trim()
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
  return flat.length > maxChars ? `${flat.slice(0, maxChars - 1)}…` : flat;
}

/** A name shown as code (file names, batch ids): backticks of its own would end the code span early. */
export function code(value: string, maxChars = 120): string {
  return `\`${plain(value.replace(/`/g, "'"), maxChars)}\``;
}
