import { HostRequestBudget, type RequestBudget } from '../intake/request-budget.js';

/**
 * One HostRequestBudget per operator host (scheme, host and port of a base URL) for the whole
 * process: feeds of several accounts at one operator share its OPERATOR_MAX_RPS, feeds at another
 * operator have their own. A rate of 0 turns the cap off.
 */
export class OperatorBudgets {
  private readonly byHost = new Map<string, HostRequestBudget>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly clock: { now(): number } = { now: () => Date.now() },
  ) {}

  /** The feed's share of its base URL's host budget; undefined when there is no cap. */
  forFeed(baseUrl: string, feed: string): RequestBudget | undefined {
    if (this.ratePerSecond <= 0) return undefined;
    const host = new URL(baseUrl).origin;
    let budget = this.byHost.get(host);
    if (!budget) this.byHost.set(host, (budget = new HostRequestBudget(this.ratePerSecond, this.clock)));
    return budget.forAccount(feed);
  }
}
