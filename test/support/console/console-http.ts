import { request } from 'node:http';

/** One reply of the console, read whole. */
export interface Reply {
  status: number;
  body: string;
  location?: string | undefined;
  /** `name=value` of each Set-Cookie */
  cookies: string[];
  /** the Set-Cookie headers as sent (attributes included) */
  setCookie: string[];
  retryAfter?: string | undefined;
}

/** One HTTP request over a real socket, from `localAddress` (Linux routes all of 127/8 to lo). */
export function send(
  url: string,
  path: string,
  opts: { localAddress?: string; headers?: Record<string, string>; method?: string; form?: Record<string, string> } = {},
): Promise<Reply> {
  const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: opts.method ?? (body !== undefined ? 'POST' : 'GET'),
        localAddress: opts.localAddress ?? '127.0.0.1',
        // a new connection per request: parallel requests are parallel sockets
        agent: false,
        headers: { ...opts.headers, ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            location: res.headers.location,
            cookies: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0] ?? ''),
            setCookie: res.headers['set-cookie'] ?? [],
            retryAfter: res.headers['retry-after'] as string | undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The sign-in form's token and its cookie, as a browser would hold them. */
export async function signInForm(url: string, localAddress = '127.0.0.1'): Promise<{ csrf: string; cookie: string }> {
  const form = await send(url, '/sign-in', { localAddress });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1];
  if (!csrf) throw new Error(`no sign-in form (${form.status})`);
  return { csrf, cookie: form.cookies.join('; ') };
}

/** Posts the sign-in form (role, password, and optional fields such as next). */
export async function postSignIn(
  url: string,
  fields: Record<string, string>,
  opts: { localAddress?: string; forwardedFor?: string; form?: { csrf: string; cookie: string } } = {},
): Promise<Reply> {
  const form = opts.form ?? (await signInForm(url, opts.localAddress));
  return send(url, '/sign-in', {
    localAddress: opts.localAddress,
    headers: { cookie: form.cookie, ...(opts.forwardedFor ? { 'x-forwarded-for': opts.forwardedFor } : {}) },
    form: { _csrf: form.csrf, ...fields },
  });
}

/** The text of a page's alert (the sign-in page's message), entities decoded. */
export function alertText(body: string): string | undefined {
  const text = /role="alert">([^<]*)/.exec(body)?.[1];
  return text?.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}
