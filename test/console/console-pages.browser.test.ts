// biome-ignore-all lint/performance/useDomNodeTextContent: these are Playwright locators: innerText is the rendered text a user reads, not a DOM node's property
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
  PATIENT,
} from '../support/console/console-fixture.js';

// Pages for a day's work (issue 34 §5, §6), in a real chromium against a real database: every page
// at 1280 and 390 px wide, screenshot (docs/console/pages/, looked at) and axe clean; the quarantine
// list as one table with a total and pages both ways; the Feeds page's link to every finding reason;
// Dismiss all matching closing exactly what it counted while a finding arrives; the audit trail in
// sentences that fit 1280 px; a prescription's subscription after a resolve.

const realServer = await postgresReachable();
const SHOTS = new URL('../../docs/console/pages/', import.meta.url).pathname;
const WIDTHS = [1280, 390] as const;

let world: ConsoleWorld;
let browser: Browser;

beforeAll(async () => {
  if (chromiumMissing || !realServer) return;
  world = await createConsoleWorld('console_pages');
  // 120 more unmatched findings of clinic_a (three pages of 50), and one of each other reason
  await world.owner.unsafe(`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version)
    select 'evt-m' || g, 'clinic_a', 'accepted', '2024-12-11'::timestamptz + g * interval '1 minute', 'sub-m' || (g % 40), '2024-12-10'
    from generate_series(1, 120) g`);
  await world.owner.unsafe(`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, first_seen_at, last_seen_at)
    select 'evt-m' || g, 'evt-m' || g, 'clinic_a', 'unmatched', 'no local prescription matches', now() - interval '2 days' + g * interval '1 second', now()
    from generate_series(1, 120) g`);
  await world.owner.unsafe(`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version) values
    ('evt-v1', 'clinic_a', 'accepted', '2024-12-12', 'sub-v1', '2031-01-01')`);
  await world.owner.unsafe(`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, first_seen_at, last_seen_at) values
    ('evt-v1', 'evt-v1', 'clinic_a', 'unsupported_version', 'api_version 2031-01-01 is not one this version reads', now(), now())`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await world?.close();
}, 60_000);

async function signIn(width = 1280): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${world.console.url}/sign-in`);
  await page.getByLabel('Role').fill(world.roles.a);
  await page.getByLabel('Password').fill(world.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${world.console.url}/`);
  return { context, page };
}

async function expectAccessible(page: Page) {
  const result = await new AxeBuilder({ page }).analyze();
  expect(result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

/** Whether the page scrolls sideways (a table region may, inside itself; the page must not). */
const pageOverflows = (page: Page) =>
  page.evaluate(() => {
    // the browser's document (this file is compiled without the DOM library)
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document
      .documentElement;
    return root.scrollWidth > root.clientWidth;
  });

const main = (page: Page) => page.locator('main').innerText();

describe.skipIf(chromiumMissing || !realServer)('the console pages for a day of work, in chromium', { timeout: 240_000 }, () => {
  test('the Feeds page links to every reason it counts, and the list takes each (unsupported_version included)', async () => {
    const { context, page } = await signIn();
    const links = page.locator('main a[href^="/quarantine?feed="]');
    const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
    expect(hrefs).toContain('/quarantine?feed=clinic_a&reason=unsupported_version');
    for (const href of hrefs) {
      const response = await page.goto(`${world.console.url}${href}`);
      expect(response?.status(), href).toBe(200);
      expect(await page.getByRole('alert').count(), href).toBe(0);
      expect(await main(page)).not.toContain('No open finding matches');
    }
    await page.goto(`${world.console.url}/quarantine?reason=unsupported_version`);
    expect(await main(page)).toContain('evt-v1');
    await context.close();
  });

  test('the Feeds page says a worker leads clinic_a, by the database clock, and where its events come from', async () => {
    const { context, page } = await signIn();
    const text = await main(page);
    expect(text).toMatch(/running\s+a worker leads it since .*heartbeat \d+ s ago/);
    expect(text).not.toContain('not yet polled');
    expect(text).toMatch(/page(s)? applied/);
    // the chart: labelled axes and the counts as text
    expect(await page.locator('svg.chart text', { hasText: 'events/h' }).count()).toBe(1);
    await page.getByText('Events per hour as text').click();
    expect(await page.locator('table.mini tbody tr').count()).toBe(24);
    await context.close();
  });

  test('the quarantine list: one table, a total, next and previous pages that join up', async () => {
    const { context, page } = await signIn();
    await page.goto(`${world.console.url}/quarantine?feed=${FEED_A}&reason=unmatched`);
    const [open] = await world.owner<{ n: number }[]>`select count(*)::int as n from intake_sync.quarantine
      where feed = ${FEED_A} and reason = 'unmatched' and resolved_at is null`;
    expect(await main(page)).toContain(`${open?.n} open findings match`);
    expect(await page.locator('main table').count()).toBe(1);
    const firstRows = await page.locator('main tbody tr').allInnerTexts();
    expect(firstRows).toHaveLength(50);
    expect(await page.getByRole('link', { name: 'Previous page' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Next page' }).click();
    const secondRows = await page.locator('main tbody tr').allInnerTexts();
    expect(secondRows).toHaveLength(50);
    expect(secondRows[0]).not.toBe(firstRows[0]);
    await page.getByRole('link', { name: 'Previous page' }).click();
    expect(await page.locator('main tbody tr').allInnerTexts()).toEqual(firstRows);
    expect(await page.getByRole('link', { name: 'Previous page' }).count()).toBe(0);
    await context.close();
  });

  test('Dismiss all matching closes exactly what it counted: a finding that arrives after the count stays open, and the page says so', async () => {
    const { context, page } = await signIn();
    await page.goto(`${world.console.url}/quarantine/dismiss-all?feed=${FEED_A}&reason=ambiguous&q=sub-m7`);
    // no ambiguous finding of sub-m7 yet: make two, count them, then one more arrives before Confirm
    await world.owner.unsafe(`update intake_sync.quarantine set reason = 'ambiguous' where quarantine_key in ('evt-m7', 'evt-m47')`);
    await page.reload();
    expect(await main(page)).toContain('2 open findings match');
    expect(await main(page)).toContain('closes on its own (this finding only)');
    await world.owner.unsafe(`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version) values
      ('evt-late', 'clinic_a', 'accepted', '2024-12-13', 'sub-m7', '2024-12-10')`);
    await world.owner.unsafe(`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, first_seen_at, last_seen_at) values
      ('evt-late', 'evt-late', 'clinic_a', 'ambiguous', 'two local prescriptions match', now() - interval '3 days', now())`);
    await page.getByLabel('Dismissal reason').selectOption('duplicate');
    await page.getByRole('button', { name: 'Dismiss these 2 findings' }).click();
    await page.waitForURL(/\/quarantine\?/);
    const status = await page.getByRole('status').innerText();
    expect(status).toContain('Dismissed 2 of the 2 findings counted (duplicate).');
    expect(status).toContain('1 matching finding arrived after the count and was left open');
    const rows = await world.owner<{ quarantine_key: string; resolution: string | null }[]>`select quarantine_key, resolution
      from intake_sync.quarantine where quarantine_key in ('evt-m7', 'evt-m47', 'evt-late') order by quarantine_key`;
    expect(rows).toEqual([
      { quarantine_key: 'evt-late', resolution: null },
      { quarantine_key: 'evt-m47', resolution: 'dismissed' },
      { quarantine_key: 'evt-m7', resolution: 'dismissed' },
    ]);
    expect(await main(page)).toContain('evt-late');
    await context.close();
  });

  test('a single Dismiss says what it closes before it does, in the words the CLI uses', async () => {
    const { context, page } = await signIn();
    await page.goto(`${world.console.url}/quarantine/${FEED_A}/evt-m8`);
    const form = await page.locator('form[action$="/dismiss"]').innerText();
    expect(form).toContain('this finding only: evt-m8');
    expect(form).toMatch(/the whole subscription: this finding and the 2 other open findings of subscription sub-m8/);
    expect(form).toContain('intake-sync quarantine dismiss');
    await page.getByLabel(/the whole subscription/).check();
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.waitForURL(/\/quarantine\?feed=clinic_a$/);
    expect(await page.getByRole('status').innerText()).toBe(
      'Dismissed evt-m8 and 2 other open findings of its subscription (not_ours): the whole subscription, 3 in all.',
    );
    await context.close();
  });

  test('the audit trail: sentences with their details, no JSON, no internal ids, fits 1280 px', async () => {
    const { context, page } = await signIn();
    // a reveal records its transaction id (xact): never shown
    await page.goto(`${world.console.url}/quarantine/${FEED_A}/evt-a5`);
    await page.getByRole('button', { name: 'Reveal identity' }).click();
    await page.waitForLoadState();
    await page.goto(`${world.console.url}/audit`);
    const text = await main(page);
    expect(text).toMatch(/asked to reveal the identity held by finding evt-a5 in feed clinic_a/);
    expect(text).toMatch(/dismissed finding evt-m7 in feed clinic_a as duplicate \(Dismiss all matching\)/);
    expect(text).toMatch(/Finding reason: ambiguous/);
    expect(text).not.toMatch(/xact|[{}]|"reason"/);
    expect(await pageOverflows(page)).toBe(false);
    const table = await page.locator('main table').boundingBox();
    expect(table?.width ?? 9999).toBeLessThanOrEqual(1280);
    await context.close();
  });

  test("a prescription shows the subscription a resolve linked to it, and that subscription's open findings", async () => {
    const { context, page } = await signIn();
    await page.goto(`${world.console.url}/quarantine/${FEED_A}/evt-m9`);
    await page.getByLabel('External id', { exact: true }).fill('rx-a-100');
    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.waitForURL(/\/prescriptions\/clinic_a\/rx-a-100$/);
    const text = await main(page);
    expect(text).toMatch(/Subscription\s+sub-m9 \(linked by the resolve of event evt-m9/);
    expect(text).not.toMatch(/Subscription\s+—/);
    await context.close();
  });
  test.each(WIDTHS)('every page at %i px: a screenshot, axe clean, no sideways scroll of the page', async (width) => {
    const { context, page } = await signIn(width);
    const pages: [string, string][] = [
      ['feeds', '/'],
      ['quarantine', '/quarantine'],
      ['quarantine-unsupported-version', '/quarantine?feed=clinic_a&reason=unsupported_version'],
      ['finding', `/quarantine/${FEED_A}/evt-a3`],
      ['dismiss-all', `/quarantine/dismiss-all?feed=${FEED_A}&reason=ambiguous`],
      ['prescriptions', '/prescriptions?q=rx-a'],
      ['prescription', `/prescriptions/${FEED_A}/rx-a-100`],
      ['audit', '/audit'],
      ['overdue', '/overdue'],
      ['not-found', '/quarantine/clinic_a/no-such-finding'],
    ];
    for (const [name, path] of pages) {
      await page.goto(`${world.console.url}${path}`);
      expect(await page.content()).not.toContain(PATIENT.last);
      await expectAccessible(page);
      expect(await pageOverflows(page), `${name} at ${width} px scrolls sideways`).toBe(false);
      await page.screenshot({ path: `${SHOTS}${name}-${width}.png`, fullPage: true });
    }
    await context.close();
    const signInPage = await (await browser.newContext({ viewport: { width, height: 800 } })).newPage();
    await signInPage.goto(`${world.console.url}/sign-in`);
    await expectAccessible(signInPage);
    await signInPage.screenshot({ path: `${SHOTS}sign-in-${width}.png`, fullPage: true });
    await signInPage.context().close();
  });
});

test.skipIf(!chromiumMissing && realServer)('console page browser tests skipped: needs chromium and a real PostgreSQL', () => {
  expect(chromiumMissing || !realServer).toBe(true);
});
