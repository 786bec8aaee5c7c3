import { html, type SafeHtml } from "./html.js";

/** `/login`: the console token, once; the session cookie then stands for it. */
export function loginPage(problem: string | undefined): SafeHtml {
  return html`${problem === undefined ? "" : html`<p class="notice bad">${problem}</p>`}
    <form method="post" action="/login" class="login">
      <p>
        <label
          >Console token (CONSOLE_TOKEN)<br /><input
            type="password"
            name="token"
            autocomplete="current-password"
            required
        /></label>
      </p>
      <p><button type="submit" class="primary">Sign in</button></p>
    </form>
    <p class="muted">Scripts may send <code>Authorization: Bearer &lt;token&gt;</code> instead.</p>`;
}
