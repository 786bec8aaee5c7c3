import { afterEach } from "vitest";

/**
 * For a test file: a list a test pushes a close function to for each thing it opens; after each test they
 * run in reverse order, the last opened closed first.
 */
export function cleanupsAfterEach(): (() => Promise<void>)[] {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return cleanups;
}
