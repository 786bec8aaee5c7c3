import { html, type SafeHtml } from "./html.js";

/** What the frame of every page shows about the visitor. */
export interface Viewer {
  /** CONSOLE_TOKEN is set: write actions exist for a signed-in visitor. */
  readonly writable: boolean;
  /** Why the deployment refuses writing now (shown on every page), if it does. */
  readonly refusal?: string | undefined;
  /** Signed in by session cookie or bearer token. */
  readonly signedIn: boolean;
  /** The session's CSRF token, for forms that post (cookie sessions only). */
  readonly csrf?: string | undefined;
}

/** A whole page: header with navigation and search, then `body`. No script anywhere. */
export function page(title: string, viewer: Viewer, body: SafeHtml): string {
  const account = !viewer.writable
    ? html`<span class="muted">read-only (CONSOLE_TOKEN not set)</span>`
    : viewer.signedIn
      ? html`<form method="post" action="/logout" class="inline">
          <input type="hidden" name="csrf" value="${viewer.csrf ?? ""}" /><button type="submit">
            Sign out
          </button>
        </form>`
      : html`<a href="/login">Sign in</a>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · invoice-relay</title>
        <link rel="stylesheet" href="/console.css" />
      </head>
      <body>
        <header>
          <a class="brand" href="/">invoice-relay</a>
          <nav><a href="/">Batches</a> <a href="/passes">Passes</a> <a href="/queue">Queue</a></nav>
          <form method="get" action="/search" class="search">
            <input type="search" name="q" placeholder="external_id or idempotency key" aria-label="Search" />
            <button type="submit">Search</button>
          </form>
          <span class="account">${account}</span>
        </header>
        <main>
          ${
            viewer.refusal === undefined
              ? html``
              : html`<p class="notice bad">Writing is refused: ${viewer.refusal}</p>`
          }
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html> `.text;
}

/** A date as the operator reads it: ISO 8601 in UTC, to the second. */
export function when(ms: number | undefined): string {
  return ms === undefined ? "" : `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}
