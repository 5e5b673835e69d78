// The shapes of a validated page, shared by preparePage() (which builds them) and pageRowsJson()
// (which serialises them), so neither imports the other.

/** A well-formed event of the page, first occurrence of its id. */
export interface PreparedEvent {
  id: string;
  name: string;
  occurredAt: string;
  subscriptionId: string;
  apiVersion: string;
  key: string;
  erx: string | null;
  rank: number | null;
  /** quarantine reason decided before matching (an unsupported api_version): stored, never matched or applied */
  hold: 'unsupported_version' | null;
  holdDetail: string | null;
  /** the event exactly as received, serialised once */
  rawJson: string;
}

/** A raw event that failed validation, ready for quarantine. */
export interface MalformedEvent {
  /** the event id when usable, else `sha256:<hex>` of the raw JSON */
  key: string;
  eventId: string | null;
  detail: string;
  /** the raw value as jsonb text: objects as received, anything else wrapped */
  rawJson: string;
}

export interface PreparedPage {
  events: PreparedEvent[];
  malformed: MalformedEvent[];
  /** well-formed repeats of an id already earlier in this page */
  duplicatesInPage: number;
  /** the rows as the page statement's parameters, built here so a prefetch takes them off the critical path */
  rowsJson: PageRowsJson;
  /** how long preparePage() took (validation and serialisation), for the page timings */
  prepareMs: number;
  /** the newest occurred_at of the page's well-formed events, in ms (the lag metrics); undefined for none */
  newestOccurredAt?: number | undefined;
}

/** A page's rows as the page statement's two json parameters (see apply-page-sql.ts for their columns). */
export interface PageRowsJson {
  events: string;
  malformed: string;
}
