/** What the operator did for one external_id through the API (POST / DELETE /prescriptions). */
export interface ExternalIdRequests {
  /** prescriptions created: more than 1 never happens (the id is unique), 0 means never created via the API */
  created: number;
  /** POSTs refused because the external_id was already taken */
  duplicates_refused: number;
  /** DELETEs applied to an existing prescription (repeats included) */
  cancellations: number;
}

/**
 * Counts, per external_id, what POST and DELETE /prescriptions did, so a test can check from the
 * operator's side that every prescription was created exactly once and none twice was attempted
 * blindly. Across credentials: a sandbox serving several tenants should use distinct id prefixes.
 */
export class RequestLedger {
  private readonly byExternalId = new Map<string, ExternalIdRequests>();

  created(externalId: string): void {
    this.entry(externalId).created++;
  }

  duplicateRefused(externalId: string): void {
    this.entry(externalId).duplicates_refused++;
  }

  cancelled(externalId: string): void {
    this.entry(externalId).cancellations++;
  }

  /** The counts of every external_id starting with `prefix` (all when omitted). */
  report(prefix = ''): Record<string, ExternalIdRequests> {
    const out: Record<string, ExternalIdRequests> = {};
    for (const [id, counts] of this.byExternalId) if (id.startsWith(prefix)) out[id] = { ...counts };
    return out;
  }

  private entry(externalId: string): ExternalIdRequests {
    let counts = this.byExternalId.get(externalId);
    if (!counts) {
      counts = { created: 0, duplicates_refused: 0, cancellations: 0 };
      this.byExternalId.set(externalId, counts);
    }
    return counts;
  }
}
