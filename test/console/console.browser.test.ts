// biome-ignore-all lint/performance/useDomNodeTextContent: these are Playwright locators: innerText is the rendered text a user reads, not a DOM node's property
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  type ConsoleWorld,
  chromiumMissing,
  createConsoleWorld,
  FEED_A,
  FEED_B,
  PATIENT,
  PATIENT_B,
} from '../support/console/console-fixture.js';

// The operator console in a real browser (Debian chromium driven by playwright-core) against a real
// database with two feeds and two app roles: isolation, masking, audited actions, CSRF, logoff, axe.
// Screenshots of each page land in docs/console/ (docs/console.md shows them).

const realServer = await postgresReachable();
const skipReason = chromiumMissing
  ? `needs the Debian chromium at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`
  : 'needs a real PostgreSQL at 127.0.0.1:5432';
const SHOTS = new URL('../../docs/console/', import.meta.url).pathname;

let world: ConsoleWorld;
let browser: Browser;

beforeAll(async () => {
  if (chromiumMissing || !realServer) return;
  world = await createConsoleWorld('console_browser');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await world?.close();
}, 60_000);

async function signIn(role: string, password = world.password): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${world.console.url}/`);
  expect(new URL(page.url()).pathname).toBe('/sign-in');
  await page.getByLabel('Role').fill(role);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${world.console.url}/`);
  return { context, page };
}

async function expectAccessible(page: Page) {
  const result = await new AxeBuilder({ page }).analyze();
  expect(result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

const auditRows = async (action: string, actor: string) =>
  world.owner<
    { subject: string; feed: string }[]
  >`select subject, feed from intake_sync.audit_log where action = ${action} and actor = ${actor} order by id`;

/** A raw HTTP request through a real socket (no browser: nothing adds a token). */
function rawRequest(
  path: string,
  options: { method: string; cookie?: string; body?: string },
): Promise<{ status: number; headers: Record<string, unknown> }> {
  const url = new URL(path, world.console.url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method,
        headers: {
          ...(options.cookie ? { cookie: options.cookie } : {}),
          ...(options.body !== undefined
            ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(options.body) }
            : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const sessionCookie = async (context: BrowserContext) => {
  const cookie = (await context.cookies()).find((c) => c.name === 'console_session');
  if (!cookie) throw new Error('no session cookie');
  return cookie;
};

// a browser on a loaded 2-core machine: a new page alone has taken 5-7 s here
describe.skipIf(chromiumMissing || !realServer)('the operator console in chromium', { timeout: 180_000 }, () => {
  test('sign-in page: labelled fields, no-store, accessible; a wrong role is refused', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 640 } });
    const page = await context.newPage();
    const response = await page.goto(`${world.console.url}/sign-in`);
    expect(response?.headers()['cache-control']).toBe('no-store');
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}sign-in.png` });
    await page.getByLabel('Role').fill('no_such_role_here');
    await page.getByLabel('Password').fill('whatever');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('Sign-in failed');
    expect((await context.cookies()).some((c) => c.name === 'console_session')).toBe(false);
    await context.close();
  });

  test('feeds: each role sees only its own feed; cookie HttpOnly and SameSite=Strict', async () => {
    const { context, page } = await signIn(world.roles.a);
    const text = await page.locator('main').innerText();
    expect(text).toContain(FEED_A);
    expect(text).not.toContain(FEED_B);
    expect(text).toMatch(/unmatched: 5/);
    expect(text).toMatch(/a worker leads it since .*heartbeat \d+ (s|m) ago/);
    expect(text).toMatch(/running\s+a worker leads it/);
    expect(text).not.toContain('stopped since');
    const cookie = await sessionCookie(context);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}feeds.png`, fullPage: true });
    // overdue counts per stage link to the list (issue 28 §5): its own feed's prescription only
    await page.getByRole('link', { name: 'sent: 1' }).click();
    await page.waitForURL(/\/overdue\?/);
    const overdue = await page.locator('main').innerText();
    expect(overdue).toContain('rx-a-late');
    expect(overdue).not.toContain('rx-b-late');
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}overdue.png`, fullPage: true });
    await page.goto(`${world.console.url}/overdue?feed=${FEED_B}`);
    expect(await page.locator('main').innerText()).toContain('None overdue.');
    await context.close();

    const b = await signIn(world.roles.b);
    const textB = await b.page.locator('main').innerText();
    expect(textB).toContain(FEED_B);
    expect(textB).not.toContain(FEED_A);
    expect(textB).toMatch(/no worker leads it: the last lease lapsed 1 h \d+ m ago/);
    // why its worker stopped it, in /readyz's words, and the command that fixes it
    expect(textB).toMatch(/stopped since .*: feed clinic_b stopped consuming: the operator says the stored iterator expired/);
    expect(textB).toContain('Fix: intake-sync resync --feed clinic_b');
    await expectAccessible(b.page);
    await b.page.screenshot({ path: `${SHOTS}feeds-stopped.png`, fullPage: true });
    await b.context.close();
  });

  test('quarantine: own findings only, one table with a subscription column, no patient data; the other feed is 404 by every path', async () => {
    const { context, page } = await signIn(world.roles.a);
    const response = await page.goto(`${world.console.url}/quarantine`);
    expect(response?.headers()['cache-control']).toBe('no-store');
    const html = await page.content();
    for (const phi of [PATIENT.first, PATIENT.last, PATIENT.dob, PATIENT_B.first, PATIENT_B.last]) expect(html).not.toContain(phi);
    expect(html).toContain('evt-a1');
    expect(html).not.toContain('evt-b1');
    expect(await page.getByRole('cell', { name: 'sub-a1' }).count()).toBe(2);
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}quarantine.png`, fullPage: true });

    // a subscription links to every open finding of it (its group), whatever page they fell on
    await page.getByRole('link', { name: 'sub-a2', exact: true }).click();
    await page.waitForURL(/[?&]q=sub-a2/);
    expect(await page.locator('main table').innerText()).toContain('evt-a3');
    await page.goto(`${world.console.url}/quarantine`);

    // search by subscription id, then by event id
    await page.getByLabel('Search').fill('sub-a2');
    await page.getByRole('button', { name: 'Apply' }).click();
    expect(await page.locator('main table').innerText()).toContain('evt-a3');
    expect(await page.locator('main').innerText()).not.toContain('evt-a1');

    for (const path of [`/quarantine/${FEED_B}/evt-b1`, `/quarantine?feed=${FEED_B}`, `/quarantine?q=evt-b1`, `/quarantine?q=sub-b1`]) {
      const r = await page.goto(`${world.console.url}${path}`);
      const body = await page.content();
      expect(body).not.toContain(PATIENT_B.last);
      expect(body).not.toContain('sub-b1</');
      if (path.startsWith('/quarantine/')) {
        expect(r?.status()).toBe(404);
        expect(body).not.toContain('evt-b1</');
      } else {
        expect(r?.status()).toBe(200);
        expect(await page.locator('main').innerText()).toContain('No open finding matches.');
      }
    }
    // a POST to the other feed's finding, with a valid token: 404, and nothing dismissed
    const csrf = await page
      .goto(`${world.console.url}/quarantine/${FEED_A}/evt-a5`)
      .then(() => page.locator('input[name=_csrf]').first().inputValue());
    const cookie = await sessionCookie(context);
    const post = await rawRequest(`/quarantine/${FEED_B}/evt-b1/dismiss`, {
      method: 'POST',
      cookie: `${cookie.name}=${cookie.value}`,
      body: `_csrf=${encodeURIComponent(csrf)}&reason=not_ours`,
    });
    expect(post.status).toBe(404);
    const [open] = await world.owner`select count(*)::int as n from intake_sync.quarantine where feed = ${FEED_B} and resolved_at is null`;
    expect(open?.n).toBe(1);
    await context.close();
  });

  test('finding: identity masked until Reveal identity, which is audited as the signed-in role', async () => {
    const { context, page } = await signIn(world.roles.a);
    await page.goto(`${world.console.url}/quarantine/${FEED_A}/evt-a3`);
    const masked = await page.content();
    expect(masked).not.toContain(PATIENT.last);
    expect(masked).not.toContain(PATIENT.dob);
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}finding.png`, fullPage: true });
    await page.getByRole('button', { name: 'Reveal identity' }).click();
    await page.waitForLoadState();
    const revealed = await page.locator('main').innerText();
    expect(revealed).toContain(PATIENT.last);
    expect(revealed).toContain(PATIENT.dob);
    expect(new URL(page.url()).search).toBe('');
    await expectAccessible(page);
    expect(await auditRows('quarantine.reveal_requested', world.roles.a)).toEqual([{ subject: 'evt-a3', feed: FEED_A }]);
    expect(await auditRows('quarantine.show', world.roles.a)).toEqual([{ subject: 'evt-a3', feed: FEED_A }]);
    // back on the finding's page the identity is masked again
    await page.goto(`${world.console.url}/quarantine/${FEED_A}/evt-a3`);
    expect(await page.content()).not.toContain(PATIENT.last);
    await context.close();
  });

  test('resolve and dismiss call the SQL API as the user and leave audit rows with that actor', async () => {
    const { context, page } = await signIn(world.roles.a);
    await page.goto(`${world.console.url}/quarantine/${FEED_A}/evt-a1`);
    await page.getByLabel('External id starts with').fill('rx-a');
    await page.getByRole('button', { name: 'Find' }).click();
    expect(await page.locator('main').innerText()).toContain('rx-a-100');
    // each local match links to its prescription's page
    expect(await page.getByRole('link', { name: 'rx-a-100', exact: true }).getAttribute('href')).toBe('/prescriptions/clinic_a/rx-a-100');
    await page.getByLabel('External id', { exact: true }).fill('rx-a-100');
    await page.getByRole('button', { name: 'Resolve' }).click();
    // the resolution lands on the prescription it now belongs to, with its message
    await page.waitForURL(/\/prescriptions\/clinic_a\/rx-a-100$/);
    expect(await page.getByRole('status').innerText()).toContain('Resolved evt-a1 to rx-a-100');
    expect(await page.getByRole('heading', { name: 'Prescription rx-a-100' }).count()).toBe(1);
    expect((await auditRows('quarantine.resolve', world.roles.a)).map((r) => r.subject)).toEqual(['evt-a1']);

    await page.goto(`${world.console.url}/quarantine/${FEED_A}/evt-a4`);
    await page.getByLabel('Dismissal reason').selectOption('operator_test');
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.waitForURL(/\/quarantine\?feed=clinic_a$/);
    expect((await auditRows('quarantine.dismiss', world.roles.a)).map((r) => r.subject)).toEqual(['evt-a4']);
    await context.close();
  });

  test('prescriptions: search and a page with the status timeline, outbox and findings', async () => {
    const { context, page } = await signIn(world.roles.a);
    await page.goto(`${world.console.url}/prescriptions`);
    await page.getByLabel('External id (or its start)').fill('rx-a');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'rx-a-100' }).click();
    const text = await page.locator('main').innerText();
    expect(text).toContain('Status timeline');
    // resolving evt-a1 applied both events of sub-a1 in one statement: one change, to dispensed
    expect(text).toMatch(/—\s+dispensed\s+evt-a2/);
    expect(text).not.toContain('Local');
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}prescription.png`, fullPage: true });
    const other = await page.goto(`${world.console.url}/prescriptions/${FEED_B}/rx-a-100`);
    expect(other?.status()).toBe(404);
    await context.close();
  });

  test('dismiss all matching: a dry-run count, Confirm, one audit row per finding', async () => {
    const { context, page } = await signIn(world.roles.a);
    const before = (await auditRows('quarantine.dismiss', world.roles.a)).length;
    await page.goto(`${world.console.url}/quarantine?feed=${FEED_A}&reason=unmatched`);
    await page.getByRole('link', { name: 'Dismiss all matching…' }).click();
    const open = await world.owner<
      { n: number }[]
    >`select count(*)::int as n from intake_sync.quarantine where feed = ${FEED_A} and resolved_at is null`;
    const count = open[0]?.n ?? 0;
    expect(count).toBeGreaterThan(1);
    expect(await page.locator('main').innerText()).toContain(`${count} open findings match`);
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}dismiss-all.png`, fullPage: true });
    await page.getByLabel('Dismissal reason').selectOption('not_ours');
    await page.getByRole('button', { name: `Dismiss these ${count} findings` }).click();
    await page.waitForURL(/\/quarantine\?/);
    expect(await page.getByRole('status').innerText()).toContain(`Dismissed ${count} of the ${count} findings counted`);
    expect((await auditRows('quarantine.dismiss', world.roles.a)).length).toBe(before + count);
    const [left] = await world.owner`select count(*)::int as n from intake_sync.quarantine where feed = ${FEED_A} and resolved_at is null`;
    expect(left?.n).toBe(0);
    const [otherFeed] =
      await world.owner`select count(*)::int as n from intake_sync.quarantine where feed = ${FEED_B} and resolved_at is null`;
    expect(otherFeed?.n).toBe(1);
    await context.close();
  });

  test('audit: the role reads its own feed trail, filtered by actor and action', async () => {
    const { context, page } = await signIn(world.roles.a);
    await page.goto(`${world.console.url}/audit`);
    await page.getByLabel('Actor').fill(world.roles.a);
    await page.getByLabel('Action').fill('quarantine.dismiss');
    await page.getByRole('button', { name: 'Apply' }).click();
    const text = await page.locator('main table').innerText();
    expect(text).toContain('quarantine.dismiss');
    expect(text).not.toContain(FEED_B);
    await expectAccessible(page);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: `${SHOTS}audit.png` });
    await context.close();
  });

  test('a POST without the CSRF token (or with a wrong one) is refused with 403 and changes nothing', async () => {
    const { context } = await signIn(world.roles.b);
    const cookie = await sessionCookie(context);
    for (const body of ['reason=not_ours', '_csrf=forged&reason=not_ours']) {
      const r = await rawRequest(`/quarantine/${FEED_B}/evt-b1/dismiss`, {
        method: 'POST',
        cookie: `${cookie.name}=${cookie.value}`,
        body,
      });
      expect(r.status).toBe(403);
      expect(r.headers['cache-control']).toBe('no-store');
    }
    const noCookie = await rawRequest('/sign-out', { method: 'POST', body: '' });
    expect(noCookie.status).toBe(303);
    expect(noCookie.headers.location).toBe('/sign-in?unsaved=1');
    const signInWithoutToken = await rawRequest('/sign-in', { method: 'POST', body: `role=${world.roles.b}&password=x` });
    expect(signInWithoutToken.status).toBe(403);
    const [open] = await world.owner`select count(*)::int as n from intake_sync.quarantine where feed = ${FEED_B} and resolved_at is null`;
    expect(open?.n).toBe(1);
    await context.close();
  });

  test('idle logoff (the injected clock) and Sign out both send the user to sign-in and end the session', async () => {
    const { context, page } = await signIn(world.roles.b);
    const cookie = await sessionCookie(context);
    world.advance(15 * 60_000 + 1);
    await page.goto(`${world.console.url}/quarantine`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await page.getByRole('alert').innerText()).toContain('signed out after a period without activity');
    const stale = await rawRequest('/', { method: 'GET', cookie: `${cookie.name}=${cookie.value}` });
    expect(stale.status).toBe(303);
    await context.close();

    const again = await signIn(world.roles.b);
    const second = await sessionCookie(again.context);
    await again.page.getByRole('button', { name: 'Sign out' }).click();
    await again.page.waitForURL(/\/sign-in$/);
    const after = await rawRequest('/', { method: 'GET', cookie: `${second.name}=${second.value}` });
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/sign-in');
    await again.context.close();
  });

  test('feeds: past 1,000 a count says "more than 1000" (it stops counting there), and its link lists the oldest', async () => {
    // 1,001 malformed findings and 1,001 sends delivered 3 h ago, unanswered, in clinic A; removed at the end
    await world.owner.unsafe(`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, raw)
      select 'cap-' || g, null, '${FEED_A}', 'malformed', 'occurred_at: not a timestamp', '{}'::jsonb from generate_series(1, 1001) g`);
    await world.owner.unsafe(`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
      select '${FEED_A}', 'rx-cap-' || g, 'send', 'delivered', now() - interval '3 hours' - make_interval(secs => g) from generate_series(1, 1001) g`);
    try {
      const { context, page } = await signIn(world.roles.a);
      const text = await page.locator('main').innerText();
      expect(text).toContain('malformed: more than 1000');
      expect(text).toContain('sent: more than 1000');
      // a count below the bound is exact, as before
      expect(text).toContain('dispensed: 1');
      await page.screenshot({ path: `${tmpdir()}/console-feeds-capped.png`, fullPage: true });
      await page.getByRole('link', { name: 'sent: more than 1000' }).click();
      await page.waitForURL(/\/overdue\?/);
      const overdue = await page.locator('main').innerText();
      expect(overdue).toContain('oldest first, the first 200');
      // the oldest delivery first: 3 h and 1,001 s ago
      expect(overdue.indexOf('rx-cap-1001')).toBeGreaterThan(-1);
      expect(overdue.indexOf('rx-cap-1001')).toBeLessThan(overdue.indexOf('rx-cap-1000'));
      expect(overdue).not.toContain('rx-cap-800');
      await context.close();
    } finally {
      await world.owner.unsafe(`delete from intake_sync.quarantine where quarantine_key like 'cap-%'`);
      await world.owner.unsafe(`delete from intake_sync.outbox where external_id like 'rx-cap-%'`);
    }
  });
});

test.skipIf(!chromiumMissing && realServer)(`console browser tests skipped: ${skipReason}`, () => {
  expect(chromiumMissing || !realServer).toBe(true);
});
