// biome-ignore-all lint/performance/useDomNodeTextContent: these are Playwright locators: innerText is the rendered text a user reads
import AxeBuilder from '@axe-core/playwright';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  type ConsoleWorld,
  chromiumMissing,
  createConsoleWorld,
  FEED_A,
} from '../support/console/console-fixture.js';
import { roleTagStatement } from '../support/test-run.js';

// The sign-in flows a support person meets, in chromium: a role with no feed is told why at sign-in,
// an expired session's Dismiss changes nothing, says so, and sign-in returns to the finding.
// Screenshots at 1280 and 390 px land in docs/console/.

const realServer = await postgresReachable();
const SHOTS = new URL('../../docs/console/', import.meta.url).pathname;

let world: ConsoleWorld;
let browser: Browser;
let noFeed: string;

beforeAll(async () => {
  if (chromiumMissing || !realServer) return;
  world = await createConsoleWorld('console_auth_browser');
  noFeed = `console_nofeed_${world.roles.a.slice(-6)}`;
  await world.owner.unsafe(`create role "${noFeed}" login password '${world.password}'`);
  await world.owner.unsafe(roleTagStatement(noFeed));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await world?.owner.unsafe(`drop role if exists "${noFeed}"`).catch(() => {});
  await world?.close();
}, 60_000);

async function expectAccessible(page: Page) {
  const result = await new AxeBuilder({ page }).analyze();
  expect(result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

async function fillSignIn(page: Page, role: string) {
  await page.getByLabel('Role').fill(role);
  await page.getByLabel('Password').fill(world.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe.skipIf(chromiumMissing || !realServer)('console sign-in flows in chromium', { timeout: 180_000 }, () => {
  test.each([1280, 390])('a role that may see no feed is refused at sign-in, told why, and holds no session (%i px)', async (width) => {
    const context = await browser.newContext({ viewport: { width, height: 700 } });
    const page = await context.newPage();
    await page.goto(`${world.console.url}/sign-in`);
    await fillSignIn(page, noFeed);
    await page.waitForLoadState();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await page.getByRole('alert').innerText()).toMatch(/Sign-in refused: This role may see no feed: ask an administrator/);
    expect((await context.cookies()).some((c) => c.name === 'console_session')).toBe(false);
    expect(world.deps.store.countOf(noFeed)).toBe(0);
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}sign-in-refused-${width}.png`, fullPage: true });
    await context.close();
  });

  test.each([1280, 390])(
    'an expired session: Dismiss changes nothing and says so; sign-in returns to the finding (%i px)',
    async (width) => {
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${world.console.url}/quarantine/${FEED_A}/evt-a2`);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await fillSignIn(page, world.roles.a);
      await page.waitForURL(`${world.console.url}/quarantine/${FEED_A}/evt-a2`);
      world.advance(15 * 60_000 + 1);
      await page.getByRole('button', { name: 'Dismiss' }).click();
      await page.waitForURL(/\/sign-in\?/);
      expect(await page.getByRole('alert').innerText()).toMatch(/signed out after a period without activity\. Nothing was changed/);
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}sign-in-expired-${width}.png`, fullPage: true });
      const [open] = await world.owner<{ n: number }[]>`
      select count(*)::int as n from intake_sync.quarantine_open where feed = ${FEED_A} and quarantine_key = 'evt-a2'`;
      expect(open?.n).toBe(1);
      await fillSignIn(page, world.roles.a);
      await page.waitForURL(`${world.console.url}/quarantine/${FEED_A}/evt-a2`);
      expect(await page.getByRole('button', { name: 'Dismiss' }).count()).toBe(1);
      await context.close();
    },
  );
});

test.skipIf(!chromiumMissing && realServer)('console sign-in browser tests skipped: needs chromium and PostgreSQL', () => {
  expect(chromiumMissing || !realServer).toBe(true);
});
