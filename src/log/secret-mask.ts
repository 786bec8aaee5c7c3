import type { Logger } from "pino";

/**
 * Secrets a process comes to know while it runs (a secret file rotated in place: src/config/live-secret.ts),
 * which every logger of the process masks from then on, as it masks those it was created with. One list
 * per process: a secret is the process's, whichever logger writes a line.
 */
const learned = new Set<string>();
let version = 0;

export function rememberSecret(value: string): void {
  if (learned.has(value)) return;
  learned.add(value);
  version++;
}

/** The secrets learned so far, and a number that changes whenever one is added. */
export function learnedSecrets(): { readonly version: number; readonly values: readonly string[] } {
  return { version, values: [...learned] };
}

/**
 * What a process does when a secret file it reads changes (src/config/live-secret.ts): a new value is
 * masked in every log from then on and the change is logged (never the value); an unusable file is
 * logged with what to do.
 */
export function loggedSecretEvents(logger: Logger): {
  readonly unusable: (message: string, variable: string, file: string) => void;
  readonly changed: (value: string, variable: string, file: string) => void;
} {
  return {
    unusable: (message, variable, file) => {
      logger.warn({ variable, file }, message);
    },
    changed: (value, variable, file) => {
      rememberSecret(value);
      // Tried, not yet known good: a key the service refuses while the one before still works is set
      // aside and said so (src/submit/key-in-use.ts).
      logger.info({ variable, file }, `${variable} holds a new value: trying it from now on`);
    },
  };
}
