import { checkSetting, type Config } from "./load.js";
import { readSecretFile } from "./secret-file.js";
import { SETTINGS } from "./settings.js";

/** The secrets a running process uses as they are now: a mounted secret file is rotated in place. */
export type LiveSecretName = "invoiceApiKey" | "consoleToken";

/**
 * A secret setting as a running process uses it. Given in the environment it never changes; given as a
 * file (`X_FILE`) it is read again every POLL_MS and whenever `refresh` asks (before the service's
 * refusal of the key pauses submission, before a console token is judged wrong), so a secret rotated in
 * place is used without a restart.
 */
export interface LiveSecret {
  /** The value to use now; undefined when the setting is not set. */
  current(): string | undefined;
  /** Reads the file again now (concurrent calls share one read); the value to use afterwards. */
  refresh(): Promise<string | undefined>;
  /** Stops reading the file. */
  close(): void;
}

/**
 * How often a secret file is read again unprompted. A rotation is used at the latest at the service's
 * first refusal of the old key (read again then); the poll only spares that one refused request where a
 * rotation leaves the old key valid a while, as rotations with an overlap do. A kubelet itself takes up
 * to a minute to update a mounted secret, so a read every 10 s adds little to that.
 */
export const POLL_MS = 10_000;

/** What a secret file's reader tells its process (to log, and to mask the new value in its logs). */
export interface SecretFileEvents {
  /** The file holds nothing usable now: the message names the file and the fix, never the value. */
  readonly unusable: (message: string, variable: string, file: string) => void;
  /** The file holds a new, well-formed value, tried from now on. */
  readonly changed: (value: string, variable: string, file: string) => void;
}

/** The secret `name` of `config`, read again from its file while the process runs (when it has one). */
export function liveSecret(
  config: Config,
  name: LiveSecretName,
  events: SecretFileEvents,
  pollMs = POLL_MS,
): LiveSecret {
  const initial = config[name];
  const path = config.secretFiles[name];
  if (path === undefined || initial === undefined)
    return { current: () => initial, refresh: () => Promise.resolve(initial), close: () => undefined };
  return new SecretFileWatch(name, path, initial, events, pollMs);
}

class SecretFileWatch implements LiveSecret {
  #value: string;
  #reading: Promise<string> | undefined;
  /** The last problem logged, so a file that stays wrong is logged once, not at every read. */
  #problem: string | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #variable: string;

  constructor(
    private readonly name: LiveSecretName,
    private readonly path: string,
    initial: string,
    private readonly events: SecretFileEvents,
    pollMs: number,
  ) {
    this.#value = initial;
    this.#variable = `${SETTINGS[name].env}_FILE`;
    this.#timer = setInterval(() => void this.refresh(), pollMs);
    this.#timer.unref();
  }

  current(): string {
    return this.#value;
  }

  refresh(): Promise<string> {
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  async #read(): Promise<string> {
    const read = await readSecretFile(this.path, this.#variable);
    const checked = read.ok ? checkSetting(this.name, read.value, this.path) : undefined;
    if (!read.ok || checked?.ok !== true) {
      const problem = read.ok
        ? checked?.ok === false
          ? checked.problem
          : "is invalid"
        : `${this.#variable} ${this.path} ${read.problem}`;
      if (problem !== this.#problem)
        this.events.unusable(
          `${problem.replace(/\.+$/, "")}. Still using the value read before; write the new secret into the file whole ` +
            "(write a temporary file next to it and rename it over this one)",
          this.#variable,
          this.path,
        );
      this.#problem = problem;
      return this.#value;
    }
    this.#problem = undefined;
    if (typeof checked.value === "string" && checked.value !== this.#value) {
      this.#value = checked.value;
      this.events.changed(checked.value, this.#variable, this.path);
    }
    return this.#value;
  }
}
