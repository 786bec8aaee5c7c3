/** How many times each key (and each invoice external_id) was committed: the proof of exactly-once. */
export class EffectLedger {
  #total = 0;
  readonly #perKey = new Map<string, number>();
  readonly #perExternalId = new Map<string, number>();
  readonly #repeatedKeys = new Set<string>();
  readonly #repeatedExternalIds = new Set<string>();

  record(key: string, externalId: string): void {
    this.#total++;
    if (bump(this.#perKey, key) > 1) this.#repeatedKeys.add(key);
    if (bump(this.#perExternalId, externalId) > 1) this.#repeatedExternalIds.add(externalId);
  }

  effectsOf(key: string): number {
    return this.#perKey.get(key) ?? 0;
  }

  snapshot(listLimit: number): EffectsSnapshot {
    return {
      total: this.#total,
      distinctKeys: this.#perKey.size,
      keysWithMultipleEffects: this.#repeatedKeys.size,
      multipleEffectKeys: [...take(this.#repeatedKeys, listLimit)],
      distinctExternalIds: this.#perExternalId.size,
      externalIdsWithMultipleEffects: this.#repeatedExternalIds.size,
      multipleEffectExternalIds: [...take(this.#repeatedExternalIds, listLimit)],
    };
  }

  clear(): void {
    this.#total = 0;
    this.#perKey.clear();
    this.#perExternalId.clear();
    this.#repeatedKeys.clear();
    this.#repeatedExternalIds.clear();
  }
}

export interface EffectsSnapshot {
  readonly total: number;
  readonly distinctKeys: number;
  readonly keysWithMultipleEffects: number;
  /** The first keys committed more than once (at most the list limit; the count above is exact). */
  readonly multipleEffectKeys: string[];
  readonly distinctExternalIds: number;
  /** Same invoice id committed under several keys: a client that re-keyed an invoice it had already sent. */
  readonly externalIdsWithMultipleEffects: number;
  readonly multipleEffectExternalIds: string[];
}

function bump(map: Map<string, number>, key: string): number {
  const n = (map.get(key) ?? 0) + 1;
  map.set(key, n);
  return n;
}

function* take<T>(items: Iterable<T>, limit: number): Generator<T> {
  let n = 0;
  for (const item of items) {
    if (n++ >= limit) return;
    yield item;
  }
}
