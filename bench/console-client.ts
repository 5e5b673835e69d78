// The bench's browser stand-in for the operator console: signs in through the form (the double-submit
// CSRF cookie and field of GET /sign-in) and times a GET to the last byte of its body.
import { performance } from 'node:perf_hooks';

/** The cookies of a response's Set-Cookie headers, name=value. Pure. */
function cookies(response: Response): string[] {
  return response.headers.getSetCookie().map((c) => c.split(';')[0] ?? '');
}

/** Signs `role` in and returns the session's Cookie header. */
export async function signIn(base: string, role: string, password: string): Promise<string> {
  const form = await fetch(`${base}/sign-in`);
  const csrfCookie = cookies(form).join('; ');
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!token) throw new Error('sign-in: no CSRF field on the form');
  const response = await fetch(`${base}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie },
    body: new URLSearchParams({ _csrf: token, role, password }).toString(),
  });
  await response.arrayBuffer();
  const session = cookies(response).find((c) => c.startsWith('console_session='));
  if (response.status !== 303 || !session) throw new Error(`sign-in: answered ${response.status} without a session`);
  return session;
}

/** One GET with the session: its status and the ms from sending to the body's last byte. */
export async function timePage(base: string, path: string, session: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { redirect: 'manual', headers: { cookie: session } });
  await response.arrayBuffer();
  return { ms: performance.now() - started, status: response.status };
}
