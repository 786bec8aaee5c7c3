import { InvariantError } from "../errors/invariant-error.js";
/**
 * Remembers, for one file, the first line and key of every external_id, in compact typed arrays so a
 * file of millions of rows stays within a few tens of MB.
 *
 * external_ids are held as a 64-bit hash, not as text. Two different ids with the same hash (about
 * one chance in 10^7 for a file of a million rows) would make the second a false `conflict`: visible in
 * the report and never sent, so never a silent loss. A `duplicate` also needs the full 128-bit key to
 * match, and the key is derived from the id itself.
 */
export type DedupeVerdict =
  | { readonly kind: "first" }
  | { readonly kind: "duplicate"; readonly firstLine: number }
  | { readonly kind: "conflict"; readonly firstLine: number; readonly earlierKey: string };

const FIRST: DedupeVerdict = Object.freeze({ kind: "first" });

// The open-addressing table holds, per slot, the id hash's high word and 1 + the entry's index (0: free).
// Probing compares high words inside the table, so only a likely match reads the entry itself: one
// cache miss per look-up, not one per probe.
const SLOT_WORDS = 2;
const ENTRY_WORDS = 6; // id hash low word; key as four 32-bit words; first line
// Entries live in fixed pages, so growing never copies them (a copy would briefly double the memory).
const PAGE_ENTRIES = 1 << 16;
// A file of a few rows (an ERP's one invoice per file) must not pay for a table sized for thousands: the
// first page starts this small and doubles (a copy, of at most half a page) until it is a whole page.
const FIRST_PAGE_ENTRIES = 1 << 6;
const INITIAL_SLOTS = 1 << 6;

export class FileDedupe {
  private slots = new Uint32Array(INITIAL_SLOTS * SLOT_WORDS);
  private mask = INITIAL_SLOTS - 1;
  private readonly pages: Uint32Array[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Records `externalId` → `key` at `line` if new, or says how it relates to the first occurrence. */
  check(externalId: string, key: string, line: number): DedupeVerdict {
    hash64(externalId);
    return this.checkHashed(lanes[0] ?? 0, lanes[1] ?? 0, key, line);
  }

  private checkHashed(hi: number, lo: number, key: string, line: number): DedupeVerdict {
    const { slots, mask } = this;
    for (let slot = hi & mask; ; slot = (slot + 1) & mask) {
      const at = slot * SLOT_WORDS;
      const stored = slots[at + 1] ?? 0;
      if (stored === 0) {
        this.insert(at, hi, lo, key, line);
        return FIRST;
      }
      if (slots[at] !== hi) continue;
      const index = stored - 1;
      const page = this.page(index);
      const base = (index % PAGE_ENTRIES) * ENTRY_WORDS;
      if (page[base] !== lo) continue;
      const firstLine = page[base + 5] ?? 0;
      return sameKey(page, base, key)
        ? { kind: "duplicate", firstLine }
        : { kind: "conflict", firstLine, earlierKey: keyAt(page, base) };
    }
  }

  private page(index: number): Uint32Array {
    const page = this.pages[(index / PAGE_ENTRIES) | 0];
    if (page === undefined) throw new InvariantError(`dedupe entry ${index} out of range`);
    return page;
  }

  private insert(at: number, hi: number, lo: number, key: string, line: number): void {
    if (this.count === 0) this.pages.push(new Uint32Array(FIRST_PAGE_ENTRIES * ENTRY_WORDS));
    else if (this.count % PAGE_ENTRIES === 0) this.pages.push(new Uint32Array(PAGE_ENTRIES * ENTRY_WORDS));
    else if (this.count < PAGE_ENTRIES) this.growFirstPage();
    const page = this.page(this.count);
    const base = (this.count % PAGE_ENTRIES) * ENTRY_WORDS;
    page[base] = lo;
    for (let i = 0; i < 4; i++) page[base + 1 + i] = keyWord(key, i);
    page[base + 5] = line;
    this.count++;
    this.slots[at] = hi;
    this.slots[at + 1] = this.count;
    // Grown at 70% full: linear probing stays short, and the table stays 8 bytes × 1.4–2.9 slots per id.
    if (this.count * 10 > (this.mask + 1) * 7) this.grow();
  }

  /** Doubles the first page when it is full (until it is a whole page): a small file's table stays small. */
  private growFirstPage(): void {
    const first = this.pages[0];
    if (first === undefined || this.count * ENTRY_WORDS < first.length) return;
    const grown = new Uint32Array(Math.min(PAGE_ENTRIES, this.count * 2) * ENTRY_WORDS);
    grown.set(first);
    this.pages[0] = grown;
  }

  /** Doubles the table; slots move by their stored high word alone, so no entry is read. */
  private grow(): void {
    const old = this.slots;
    const mask = this.mask * 2 + 1;
    const slots = new Uint32Array((mask + 1) * SLOT_WORDS);
    for (let from = 0; from < old.length; from += SLOT_WORDS) {
      const stored = old[from + 1] ?? 0;
      if (stored === 0) continue;
      const hi = old[from] ?? 0;
      let slot = hi & mask;
      while ((slots[slot * SLOT_WORDS + 1] ?? 0) !== 0) slot = (slot + 1) & mask;
      slots[slot * SLOT_WORDS] = hi;
      slots[slot * SLOT_WORDS + 1] = stored;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

function sameKey(page: Uint32Array, base: number, key: string): boolean {
  for (let i = 0; i < 4; i++) if (page[base + 1 + i] !== keyWord(key, i)) return false;
  return true;
}

function keyAt(page: Uint32Array, base: number): string {
  let hex = "";
  for (let i = 0; i < 4; i++) hex += (page[base + 1 + i] ?? 0).toString(16).padStart(8, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Where each 32-bit word's eight hex digits sit in "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
const WORD_DIGITS: readonly (readonly number[])[] = [
  [0, 1, 2, 3, 4, 5, 6, 7],
  [9, 10, 11, 12, 14, 15, 16, 17],
  [19, 20, 21, 22, 24, 25, 26, 27],
  [28, 29, 30, 31, 32, 33, 34, 35],
];

/** Word `n` (0-3) of a UUID's 128 bits, read from its hex digits without allocating. */
function keyWord(key: string, n: number): number {
  let word = 0;
  for (const at of WORD_DIGITS[n] ?? []) {
    const c = key.charCodeAt(at);
    word = (word << 4) | (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);
  }
  return word >>> 0;
}

const lanes = new Uint32Array(2);

/**
 * A 64-bit string hash as two 32-bit lanes with different seeds, computed in one pass (murmur3-style
 * mixing over UTF-16 code units), written to `lanes` to avoid allocating.
 */
function hash64(text: string): void {
  let a = 0x9e3779b1;
  let b = 0x85ebca77;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0xcc9e2d51);
    a = Math.imul((a << 15) | (a >>> 17), 0x1b873593);
    b = Math.imul(b ^ c, 0x1b873593);
    b = Math.imul((b << 13) | (b >>> 19), 0xcc9e2d51);
  }
  lanes[0] = finalMix(a ^ text.length);
  lanes[1] = finalMix(b ^ text.length);
}

function finalMix(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
