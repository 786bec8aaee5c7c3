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

const EMPTY = 0xffffffff;
const ENTRY_WORDS = 7; // idHash hi, lo; key as four 32-bit words; first line
// Entries live in fixed pages, so growing never copies (a copy would briefly double the memory).
const PAGE_ENTRIES = 1 << 16;

export class FileDedupe {
  private slots = new Uint32Array(1 << 12).fill(EMPTY);
  private readonly pages: Uint32Array[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Records `externalId` → `key` at `line` if new, or says how it relates to the first occurrence. */
  check(externalId: string, key: string, line: number): DedupeVerdict {
    const hi = hash32(externalId, 0x9e3779b1);
    const lo = hash32(externalId, 0x85ebca77);
    const mask = this.slots.length - 1;
    for (let slot = (hi ^ lo) & mask; ; slot = (slot + 1) & mask) {
      const index = this.slots[slot] ?? EMPTY;
      if (index === EMPTY) {
        this.insert(slot, hi, lo, key, line);
        return { kind: "first" };
      }
      const [page, base] = this.locate(index);
      if (page[base] === hi && page[base + 1] === lo) {
        const firstLine = page[base + 6] ?? 0;
        return sameKey(page, base, key)
          ? { kind: "duplicate", firstLine }
          : { kind: "conflict", firstLine, earlierKey: keyAt(page, base) };
      }
    }
  }

  private locate(index: number): [Uint32Array, number] {
    const page = this.pages[Math.floor(index / PAGE_ENTRIES)];
    if (page === undefined) throw new Error(`dedupe entry ${index} out of range`);
    return [page, (index % PAGE_ENTRIES) * ENTRY_WORDS];
  }

  private insert(slot: number, hi: number, lo: number, key: string, line: number): void {
    if (this.count % PAGE_ENTRIES === 0) this.pages.push(new Uint32Array(PAGE_ENTRIES * ENTRY_WORDS));
    const [page, base] = this.locate(this.count);
    page[base] = hi;
    page[base + 1] = lo;
    for (let i = 0; i < 4; i++) page[base + 2 + i] = keyWord(key, i);
    page[base + 6] = line;
    this.slots[slot] = this.count;
    this.count++;
    if (this.count * 4 > this.slots.length * 3) this.rehash();
  }

  private rehash(): void {
    const slots = new Uint32Array(this.slots.length * 2).fill(EMPTY);
    const mask = slots.length - 1;
    for (let index = 0; index < this.count; index++) {
      const [page, base] = this.locate(index);
      let slot = ((page[base] ?? 0) ^ (page[base + 1] ?? 0)) & mask;
      while (slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      slots[slot] = index;
    }
    this.slots = slots;
  }
}

function sameKey(page: Uint32Array, base: number, key: string): boolean {
  for (let i = 0; i < 4; i++) if (page[base + 2 + i] !== keyWord(key, i)) return false;
  return true;
}

function keyAt(page: Uint32Array, base: number): string {
  let hex = "";
  for (let i = 0; i < 4; i++) hex += (page[base + 2 + i] ?? 0).toString(16).padStart(8, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Word `n` (0-3) of a UUID's 128 bits, read from its hex digits without allocating. */
function keyWord(key: string, n: number): number {
  let word = 0;
  let digits = 0;
  // hex digits 8n .. 8n+7, skipping the dashes at string positions 8, 13, 18 and 23
  for (let i = 0, seen = 0; i < key.length && digits < 8; i++) {
    const c = key.charCodeAt(i);
    if (c === 0x2d) continue;
    if (seen++ < n * 8) continue;
    word = (word << 4) | (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);
    digits++;
  }
  return word >>> 0;
}

/** A seeded 32-bit string hash (murmur3-style mixing over UTF-16 code units). */
function hash32(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0xcc9e2d51);
    h = (h << 15) | (h >>> 17);
    h = Math.imul(h, 0x1b873593);
  }
  h ^= text.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
