import { API_VERSION, type KnownEventName, type PrescriptionIdentity, type PrescriptionRequest } from '../intake/index.js';
import { eventTail, type EventSubscription } from './event-json.js';
import { Feed } from './feed.js';
import { compositeKey } from './identity-match.js';
import type { VersionListing } from './versions.js';

/**
 * Where a prescription's full request lives: kept as received, or (for bulk seeds)
 * regenerated from its fixture parameters so 250,000 seeds do not hold 250,000 requests.
 */
export type PrescriptionSource =
  | { kind: 'request'; request: PrescriptionRequest }
  | { kind: 'fixture'; index: number; prefix: string; rejected: boolean };

export interface PrescriptionRecord {
  /** creation order across the whole sandbox: breaks ties between steps due at the same time */
  readonly seq: number;
  readonly tenant: Tenant;
  readonly externalId: string;
  readonly source: PrescriptionSource;
  readonly identity: PrescriptionIdentity;
  readonly identityKey: string;
  readonly identityJson: string;
  readonly receivedAt: number;
  readonly path: readonly KnownEventName[];
  /** how many steps of `path` are logged (happened) */
  logged: number;
  nextDueAt: number;
  cancellationRequestedAt: string | null;
}

export interface SubscriptionRecord extends EventSubscription {
  readonly id: string;
  readonly identity: PrescriptionIdentity;
  readonly identityKey: string;
  readonly backfillPreviousEvents: boolean | null;
  readonly apiVersion: string;
  cancelledAt: string | null;
}

/** Everything one credential owns: it never sees another credential's records or events. */
export class Tenant {
  readonly prescriptions = new Map<string, PrescriptionRecord>();
  readonly subscriptions = new Map<string, SubscriptionRecord>();
  /** the default version's feed (every version's, when the listing is shared) */
  readonly feed: Feed;
  // separate listing: the feeds of the other versions, created on first use
  private readonly versionFeeds = new Map<string, Feed>();
  private readonly subscriptionsByKey = new Map<string, SubscriptionRecord[]>();
  private subscriptionCount = 0;

  constructor(
    readonly ordinal: number,
    private readonly now?: () => number,
    /** the first served version: its feed keeps the `evt_<tenant>_` ids */
    private readonly defaultVersion = API_VERSION,
    private readonly listing: VersionListing = 'separate',
  ) {
    this.feed = new Feed(`evt_${ordinal.toString(36)}_`, now);
  }

  /**
   * The feed that events of `apiVersion` are published to and listed from. Separate listing: one per
   * version, ids prefixed `evt_<tenant>v<yyyymmdd>_` (never a prefix of another feed's, so GET
   * /events/{id} under one version does not find another's); shared: the one feed.
   */
  feedFor(apiVersion: string): Feed {
    if (this.listing === 'shared' || apiVersion === this.defaultVersion) return this.feed;
    let feed = this.versionFeeds.get(apiVersion);
    if (!feed) {
      feed = new Feed(`evt_${this.ordinal.toString(36)}v${apiVersion.replaceAll('-', '')}_`, this.now);
      this.versionFeeds.set(apiVersion, feed);
    }
    return feed;
  }

  /** Entries across every feed of this credential. */
  get feedEntries(): number {
    let total = this.feed.length;
    for (const feed of this.versionFeeds.values()) total += feed.length;
    return total;
  }

  /** Creates an active subscription (id `sub_<tenant>_<n>`). */
  addSubscription(identity: PrescriptionIdentity, backfill: boolean | null, apiVersion: string, key?: string): SubscriptionRecord {
    const identityKey = key ?? compositeKey(identity);
    const id = `sub_${this.ordinal.toString(36)}_${(this.subscriptionCount++).toString(36)}`;
    const record: SubscriptionRecord = {
      id,
      eventTail: eventTail(apiVersion, id),
      identity,
      identityKey,
      backfillPreviousEvents: backfill,
      apiVersion,
      cancelledAt: null,
    };
    this.subscriptions.set(record.id, record);
    const sameKey = this.subscriptionsByKey.get(identityKey);
    if (sameKey) sameKey.push(record);
    else this.subscriptionsByKey.set(identityKey, [record]);
    return record;
  }

  /** Subscriptions (active or not) whose composite identity key is `key`, in creation order. */
  subscriptionsWithKey(key: string): readonly SubscriptionRecord[] {
    return this.subscriptionsByKey.get(key) ?? NONE;
  }
}

const NONE: readonly SubscriptionRecord[] = Object.freeze([]);
