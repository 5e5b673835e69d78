/** Authenticated API requests answered, per served version and resource (`events`, `subscriptions`, ...): for tests and stats. */
export class ApiRequestCounts extends Map<string, Map<string, number>> {
  /** Counts one request of `resource` under `version`. */
  count(version: string, resource: string): void {
    let byResource = this.get(version);
    if (!byResource) this.set(version, (byResource = new Map()));
    byResource.set(resource, (byResource.get(resource) ?? 0) + 1);
  }

  /** The counts as plain objects (the admin stats' `api_requests`). */
  toRecord(): Record<string, Record<string, number>> {
    return Object.fromEntries([...this].map(([version, byResource]) => [version, Object.fromEntries(byResource)]));
  }
}
