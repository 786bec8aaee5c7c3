/** The console's only stylesheet, served at /console.css (the Content-Security-Policy allows no inline style). */
export const STYLESHEET = `
:root { color-scheme: light; --fg: #1d2330; --muted: #667085; --line: #d9dee7; --bg: #f6f7f9; --accent: #2454c5; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.5rem; background: #1d2330; color: #fff; }
header a { color: #fff; text-decoration: none; }
header nav a { margin-right: 1rem; opacity: .85; }
header nav a:hover { opacity: 1; text-decoration: underline; }
.brand { font-weight: 700; letter-spacing: .02em; }
.search { margin-left: auto; display: flex; gap: .3rem; }
.search input { width: 20rem; padding: .3rem .5rem; border-radius: 4px; border: 0; }
.account .muted { color: #b8c0cc; }
main { padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.35rem; margin: .4rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f5; font-weight: 600; white-space: nowrap; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.mono, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; overflow-wrap: break-word; }
.id { white-space: nowrap; }
td.error { color: #9a1c1c; max-width: 32rem; }
a { color: var(--accent); }
.muted { color: var(--muted); }
.status { display: inline-block; padding: 0 .45rem; border-radius: 9px; font-size: 12px; font-weight: 600; background: #e4e7ec; }
.status-succeeded, .status-reported { background: #d1f2dc; color: #11602f; }
.status-duplicate { background: #dde8ff; color: #1e3f8a; }
.status-rejected, .status-failed, .status-conflict, .status-changed { background: #fde2e1; color: #8c1d18; }
.status-pending, .status-ingesting, .status-ingested, .status-queued, .status-retrying, .status-running { background: #fff1cc; color: #7a4b00; }
progress { width: 9rem; height: .8rem; vertical-align: middle; }
.filters a { margin-right: .8rem; }
.filters a.current { font-weight: 700; color: var(--fg); text-decoration: none; }
.pager { margin: .8rem 0; }
dl.record { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; background: #fff; padding: .8rem 1rem; border: 1px solid var(--line); }
dl.record dt { font-weight: 600; }
dl.record dd { margin: 0; }
.notice { padding: .6rem .9rem; border-radius: 4px; background: #fff; border: 1px solid var(--line); margin: .8rem 0; }
.notice.bad { border-color: #e5a5a0; background: #fff4f3; }
.notice.good { border-color: #9ed3b0; background: #f2fbf5; }
form.inline { display: inline; }
button { font: inherit; padding: .3rem .8rem; border-radius: 4px; border: 1px solid #9aa4b5; background: #fff; cursor: pointer; }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
.login input { padding: .4rem; width: 22rem; }
.pass-chart { margin: 0; background: #fff; border: 1px solid var(--line); padding: .6rem; }
.pass-chart svg { width: 100%; height: auto; display: block; }
.chart-grid { stroke: #e4e7ec; stroke-width: 1; }
.chart-label { font-size: 11px; fill: var(--muted); }
.pass-chart-empty { color: var(--muted); }
.chart-accepted { fill: #3aa56b; }
.chart-refused { fill: #e08a2e; }
.chart-other { fill: #b4bcc8; }
.chart-learned { fill: none; stroke: #2454c5; stroke-width: 2; }
.pass-chart figcaption { color: var(--muted); margin-top: .4rem; }
.key { display: inline-block; width: .8rem; height: .8rem; vertical-align: middle; margin-left: .6rem; }
.key-accepted { background: #3aa56b; } .key-refused { background: #e08a2e; } .key-other { background: #b4bcc8; }
.key-learned { height: 2px; background: #2454c5; }
`;
