import { createHash, randomBytes, randomUUID } from "node:crypto";

/**
 * The simulator's stand-in for the agent network's developer-key prefix. The spec only says the real
 * prefix ends in `dev_`; `amn_` ("agent memory network") is the simulator's own choice.
 */
export const DEVELOPER_KEY_PREFIX = "amn_dev_";
/** `key_prefix` in the token response: the label plus four random characters, enough to tell keys apart. */
export const KEY_PREFIX_LENGTH = DEVELOPER_KEY_PREFIX.length + 4;

export interface IssuedKey {
  readonly developerId: string;
  readonly apiKey: string;
  readonly keyPrefix: string;
}

/** What is kept of an issued key: never the key, only its sha256. */
export interface DeveloperKeyRecord {
  readonly developerId: string;
  readonly developerName: string;
  readonly keyPrefix: string;
  readonly keySha256: string;
  readonly issuedAt: string;
}

export class DeveloperKeys {
  readonly #byHash = new Map<string, DeveloperKeyRecord>();

  get size(): number {
    return this.#byHash.size;
  }

  /** Issues a new key; the caller shows it once, after which only its hash exists here. */
  issue(developerName: string, now: Date = new Date()): IssuedKey {
    const apiKey = `${DEVELOPER_KEY_PREFIX}${randomBytes(24).toString("base64url")}`;
    const developerId = randomUUID();
    const keyPrefix = apiKey.slice(0, KEY_PREFIX_LENGTH);
    this.#byHash.set(sha256(apiKey), {
      developerId,
      developerName,
      keyPrefix,
      keySha256: sha256(apiKey),
      issuedAt: now.toISOString(),
    });
    return { developerId, apiKey, keyPrefix };
  }

  /** Finds the developer a presented key belongs to, by hash. */
  lookUp(apiKey: string): DeveloperKeyRecord | undefined {
    return this.#byHash.get(sha256(apiKey));
  }

  list(): DeveloperKeyRecord[] {
    return [...this.#byHash.values()];
  }

  clear(): void {
    this.#byHash.clear();
  }
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
