/** Where the API key comes from when it can change while the process runs (src/config/live-secret.ts). */
export interface ApiKeySource {
  current(): string | undefined;
  /** Reads the key again now; the key to use afterwards. */
  refresh(): Promise<string | undefined>;
}

/**
 * Which API key a request carries, from what the service said of the keys sent so far. The key file's
 * value is used, except a value the service refused (401/403) while an earlier key still worked: that
 * one is unusable, as a half-written file or a key the service does not take yet, and the key last
 * accepted stays in use until the file holds another value or the service refuses the old key too.
 */
export class KeyInUse {
  /** The key the service last took a request with. */
  #accepted: string | undefined;
  /** The file's value the service refused while `#accepted` still worked. */
  #refused: string | undefined;

  constructor(
    private readonly source: ApiKeySource,
    /** The file's value `httpStatus` refused, the accepted key kept: said once per value (never the key). */
    private readonly onKept: (httpStatus: number) => void = () => undefined,
  ) {}

  current(): string {
    const read = this.source.current() ?? "";
    return read === this.#refused && this.#accepted !== undefined ? this.#accepted : read;
  }

  /** The service took a request sent with `key` (any answer but a refusal of the key). */
  accepted(key: string): void {
    this.#accepted = key;
    if (this.#refused === key) this.#refused = undefined;
  }

  /**
   * The service refused `key`: the key to send the same request with once more, or undefined when there
   * is none left (the refusal stands). The file is read again first, so a key rotated meanwhile is tried.
   */
  async refused(key: string, httpStatus: number): Promise<string | undefined> {
    const read = (await this.source.refresh()) ?? "";
    if (key === this.#accepted) {
      // The key that worked is revoked: whatever the file holds is all there is to try.
      this.#accepted = undefined;
      this.#refused = undefined;
      return read === key ? undefined : read;
    }
    if (read !== key && read !== this.#refused) return read;
    if (this.#accepted === undefined) return undefined;
    if (this.#refused !== read) {
      this.#refused = read;
      this.onKept(httpStatus);
    }
    return this.#accepted;
  }
}

/** Whether an answer says nothing of the key: it was neither refused nor judged (a gateway's 429, a 5xx). */
export function judgedKey(status: number): "accepted" | "refused" | "unknown" {
  if (status === 401 || status === 403) return "refused";
  // Proxy authentication, a timeout or a throttle may come before the service looks at the key.
  if (status >= 500 || status === 407 || status === 408 || status === 429) return "unknown";
  return "accepted";
}
