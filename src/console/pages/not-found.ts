import { html } from '../html.js';
import { layout, type LayoutSession } from '../layout.js';

/** The 404 page: says nothing about what was asked for. */
export function notFoundPage(session?: LayoutSession): string {
  return layout({ title: 'Not found', session, body: html`<p>There is nothing here that your role can see.</p>` }).text;
}

/** An error page with a message that holds no value from the request. */
export function problemPage(title: string, message: string, session?: LayoutSession): string {
  return layout({ title, session, body: html`<p class="error" role="alert">${message}</p>` }).text;
}
