import { html, type SafeHtml } from './html.js';

/** What the layout needs of a signed-in session (absent on the sign-in page). */
export interface LayoutSession {
  role: string;
  csrf: string;
}

const NAV = [
  { href: '/', label: 'Feeds' },
  { href: '/quarantine', label: 'Quarantine' },
  { href: '/prescriptions', label: 'Prescriptions' },
  { href: '/audit', label: 'Audit' },
] as const;

/** A whole page: header with navigation and the Sign out button, the flash message, the body. */
export function layout(options: { title: string; session?: LayoutSession; current?: string; flash?: string; body: SafeHtml }): SafeHtml {
  const { session } = options;
  const nav = session
    ? html`<nav aria-label="Main"><ul>${NAV.map(
        (item) => html`<li><a href="${item.href}"${options.current === item.href ? html` aria-current="page"` : ''}>${item.label}</a></li>`,
      )}</ul></nav>
      <form method="post" action="/sign-out" class="sign-out"><span>Signed in as <strong>${session.role}</strong></span>
        <input type="hidden" name="_csrf" value="${session.csrf}"><button type="submit">Sign out</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · intake-sync console</title><link rel="stylesheet" href="/console.css"></head>
<body><header><span class="brand">intake-sync console</span>${nav}</header>
<main><h1>${options.title}</h1>${options.flash ? html`<p class="flash" role="status">${options.flash}</p>` : ''}${options.body}</main>
</body></html>`;
}

/** The style sheet, served from /console.css (the CSP allows no inline style). */
export const CONSOLE_CSS = `
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1b1f24;background:#f6f7f9}
header{display:flex;flex-wrap:wrap;align-items:center;gap:1.5rem;padding:.6rem 1.2rem;background:#1d3557;color:#fff}
header a{color:#fff}.brand{font-weight:600}nav ul{display:flex;gap:1rem;list-style:none;margin:0;padding:0}
nav a[aria-current=page]{font-weight:700;text-decoration-thickness:3px}
.sign-out{margin-left:auto;display:flex;gap:.6rem;align-items:center}
main{padding:1rem 1.2rem;max-width:100%}h1{font-size:1.4rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.4rem 0 .5rem}
table{border-collapse:collapse;background:#fff;width:100%;margin:.4rem 0 1rem}th,td{border:1px solid #c9ced6;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#e9edf2}form.filters{display:flex;flex-wrap:wrap;gap:.8rem;align-items:flex-end;margin-bottom:1rem}
label{display:flex;flex-direction:column;font-size:.85rem;gap:.15rem}input,select,button{font:inherit;padding:.3rem .45rem}
button{background:#1d3557;color:#fff;border:1px solid #1d3557;border-radius:3px;cursor:pointer}
button.danger{background:#9b1c1c;border-color:#9b1c1c}.flash{background:#e6f4ea;border:1px solid #2e7d32;padding:.5rem}
.error{background:#fdecea;border:1px solid #9b1c1c;padding:.5rem}.masked{color:#4a525c;font-style:italic}
.actions{display:flex;flex-wrap:wrap;gap:2rem;margin-top:1rem}.actions form{background:#fff;border:1px solid #c9ced6;padding:.8rem}.actions h2{margin-top:0}
.signin{max-width:22rem;background:#fff;border:1px solid #c9ced6;padding:1rem;display:flex;flex-direction:column;gap:.8rem}
svg.chart{background:#fff;border:1px solid #c9ced6}dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;background:#fff;padding:.8rem;border:1px solid #c9ced6}
dt{font-weight:600}dd{margin:0}code{font-size:.9em;overflow-wrap:anywhere}
.table-scroll{overflow-x:auto;max-width:100%;margin:.4rem 0 1rem}.table-scroll table{margin:0}
table.compact th,table.compact td{padding:.2rem .4rem;font-size:.9rem;white-space:nowrap}table.compact td.detail{white-space:normal;min-width:12rem}
.muted{color:#4a525c}.summary{margin:.4rem 0}.pager{display:flex;gap:1.2rem;margin:.6rem 0 1rem}
ul.details{list-style:none;margin:.2rem 0 0;padding:0;font-size:.85rem;color:#333a42}ul.details li{display:inline-block;margin-right:1rem}ul.details span{font-weight:600}
table.audit td{overflow-wrap:break-word}table.audit td.when{white-space:nowrap;width:13rem}
fieldset{border:1px solid #c9ced6;margin:0 0 .6rem;padding:.4rem .6rem}legend{font-size:.85rem}label.choice{flex-direction:row;gap:.4rem;align-items:baseline;font-size:.9rem}
figure.chart{margin:0}figcaption{font-size:.8rem}table.mini{width:auto;margin:.3rem 0}table.mini td,table.mini th{padding:.05rem .4rem}
main{overflow-wrap:break-word}
section.feed{display:flex;flex-wrap:wrap;gap:1rem 2rem;background:#fff;border:1px solid #c9ced6;padding:.6rem .9rem;margin:0 0 1rem}
section.feed h2{flex-basis:100%;margin:0}section.feed dl.feed-facts{border:0;padding:0;flex:1 1 20rem;min-width:0;grid-template-columns:minmax(6rem,max-content) minmax(0,1fr)}
.feed-chart h3{font-size:.95rem;margin:0 0 .3rem}
@media (max-width:600px){main{padding:.6rem}header{gap:.6rem;padding:.5rem .6rem}.sign-out{margin-left:0}form.filters label,form.filters input,form.filters select{width:100%}section.feed dl.feed-facts{grid-template-columns:minmax(0,1fr)}section.feed dd{margin-bottom:.3rem}table.audit td.when{white-space:normal;width:6.5rem}}
`;
