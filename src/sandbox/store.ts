import { randomBytes } from 'node:crypto';
import { API_VERSION, type KnownEventName, type PrescriptionIdentity, type PrescriptionRequest } from '../intake/index.js';
import { ApiRequestCounts } from './api-request-counts.js';
import { DueQueue } from './due-queue.js';
import type { FaultControl } from './fault-control.js';
import { samplePrescription } from './fixtures.js';
import { serializeIdentity } from './event-json.js';
import { compositeKey, erxCompatible, identityOfRequest } from './identity-match.js';
import { shuffleInPlace } from './prng.js';
import { publishEvent } from './publisher.js';
import { RequestLedger } from './request-ledger.js';
import type { Retention } from './retention.js';
import { sandboxPath, stepDueAt } from './rules.js';
import { type SeedOptions, seedPlan } from './seed-plan.js';
import type { Feed } from './feed.js';
import type { VersionListing } from './versions.js';
import { Tenant, type PrescriptionRecord, type PrescriptionSource, type SubscriptionRecord } from './tenant.js';
import { type Credential, TenantBook } from './tenant-book.js';

export type { Credential } from './tenant-book.js';

export interface SandboxStats {
  now: string;
  pending_prescriptions: number;
  credentials: Array<{ key: string; active: boolean; prescriptions: number; subscriptions: number; feed_entries: number }>;
  /** authenticated requests answered per served version and resource */
  api_requests: Record<string, Record<string, number>>;
}

/**
 * The operator's state: credentials, each credential's prescriptions, subscriptions
 * and feed, and the schedule of sandbox steps. Publication is lazy: publishDue()
 * (called before every request is answered) logs and publishes everything due now.
 */
export class SandboxStore {
  private readonly book = new TenantBook();
  private readonly queue = new DueQueue<PrescriptionRecord>();
  private nextSeq = 0;
  /** what POST / DELETE /prescriptions did per external_id (admin: GET /_sandbox/prescription-requests) */
  readonly requests = new RequestLedger();
  /** undefined: every entry stays visible forever (the spec's "currently indefinite") */
  retention: Retention | undefined;

  /** GET/POST/DELETE requests answered per version and resource, for tests */
  readonly apiRequests = new ApiRequestCounts();

  /**
   * This run of the simulator, in every iterator it issues: a restarted simulator (a new feed in
   * memory) refuses the last run's positions instead of reading them as its own (iterator.ts)
   */
  readonly instance = randomBytes(4).toString('hex');

  constructor(
    private readonly now: () => number,
    private readonly faults: FaultControl,
    credentials: readonly Credential[],
    /** served versions, the default first (see versions.ts) */
    readonly versions: readonly string[] = [API_VERSION],
    readonly listing: VersionListing = 'separate',
  ) {
    for (const credential of credentials) this.addCredential(credential);
  }

  /** The default version: what a request outside any version path (seeds, injections) means. */
  get defaultVersion(): string {
    return this.versions[0] ?? API_VERSION;
  }

  /** Adds (or re-enables) a credential; a key keeps its data across revoke and re-add. */
  addCredential(credential: Credential): void {
    this.book.add(credential, (number) => new Tenant(number, this.now, this.defaultVersion, this.listing));
  }

  /** Revokes a credential: its requests get 401 from now on. Returns whether it was active. */
  revokeCredential(key: string): boolean {
    return this.book.revoke(key);
  }

  /** The tenant of an active key/secret pair, or undefined. */
  authenticate(key: string, secret: string): Tenant | undefined {
    return this.book.authenticate(key, secret);
  }

  /** Active credential keys, oldest first (the first is the default for seeding and injection). */
  credentialKeys(): string[] {
    return this.book.activeKeys();
  }

  private tenantOf(key: string | undefined): Tenant {
    return this.book.tenantOf(key);
  }

  /** Position of a feed's oldest entry still retained at now() (0 without retention). */
  oldestRetained(feed: Feed): number {
    return this.retention ? feed.firstPublishedAfter(this.now() - this.retention.ms) : 0;
  }

  /** Logs and publishes every step due at now(), in due-time order (ties: prescription creation order). */
  publishDue(): number {
    const nowMs = this.now();
    const window = this.faults.config.reorderWindow;
    if (window > 1) return this.publishDueShuffled(nowMs, window);
    let published = 0;
    for (let record = this.queue.popDue(nowMs); record; record = this.queue.popDue(nowMs)) {
      this.publishStep(record, this.logNextStep(record), record.tenant.subscriptionsWithKey(record.identityKey));
      published += 1;
    }
    return published;
  }

  // reorder fault: due steps are published in a seeded-shuffled order within windows
  // of `window` steps, so a later lifecycle step can precede an earlier one in the feed
  private publishDueShuffled(nowMs: number, window: number): number {
    let published = 0;
    for (;;) {
      const batch: Array<{ record: PrescriptionRecord; step: number }> = [];
      for (let record = this.queue.popDue(nowMs); record; record = batch.length < window - 1 ? this.queue.popDue(nowMs) : undefined) {
        batch.push({ record, step: this.logNextStep(record) });
      }
      if (batch.length === 0) return published;
      for (const { record, step } of shuffleInPlace(batch, this.faults.contentRandom)) {
        this.publishStep(record, step, record.tenant.subscriptionsWithKey(record.identityKey));
      }
      published += batch.length;
    }
  }

  /** Marks the next step of a due prescription as logged and requeues it for the step after. */
  private logNextStep(record: PrescriptionRecord): number {
    const step = record.logged;
    record.logged += 1;
    if (record.logged < record.path.length) {
      record.nextDueAt = stepDueAt(record.receivedAt, record.logged);
      this.queue.push(record);
    }
    return step;
  }

  /** Publishes one logged step to each active candidate subscription whose identity matches. */
  // `backfill`: published now for a new subscription; otherwise at its due time (publication is lazy)
  private publishStep(record: PrescriptionRecord, step: number, candidates: readonly SubscriptionRecord[], backfill = false): void {
    const name = record.path[step] as string;
    const dueAt = stepDueAt(record.receivedAt, step);
    const occurredAtIso = new Date(dueAt).toISOString();
    const publishedAtMs = backfill ? this.now() : dueAt;
    for (const subscription of candidates) {
      if (subscription.cancelledAt !== null || subscription.identityKey !== record.identityKey) continue;
      if (!erxCompatible(subscription.identity, record.identity)) continue;
      const parts = { name, occurredAtIso, identityJson: record.identityJson, subscription };
      publishEvent(record.tenant.feedFor(subscription.apiVersion), parts, this.faults.config, this.faults.contentRandom, publishedAtMs);
    }
  }

  private addPrescription(
    tenant: Tenant,
    externalId: string,
    identity: PrescriptionIdentity,
    path: readonly KnownEventName[],
    source: PrescriptionSource,
    receivedAt: number,
    apiVersion: string,
  ): PrescriptionRecord {
    const identityKey = compositeKey(identity);
    const record: PrescriptionRecord = {
      seq: this.nextSeq++,
      tenant,
      externalId,
      source,
      identity,
      identityKey,
      identityJson: serializeIdentity(identity),
      receivedAt,
      path,
      logged: 0,
      nextDueAt: stepDueAt(receivedAt, 0),
      cancellationRequestedAt: null,
    };
    tenant.prescriptions.set(externalId, record);
    // spec: a subscription is created automatically for every prescription sent, at the version it was sent through
    tenant.addSubscription(identity, false, apiVersion, identityKey);
    this.queue.push(record);
    return record;
  }

  /** POST /prescriptions (through `apiVersion`'s path): undefined when the external_id is already taken for this credential. */
  createPrescription(tenant: Tenant, request: PrescriptionRequest, apiVersion = this.defaultVersion): PrescriptionRecord | undefined {
    if (tenant.prescriptions.has(request.external_id)) {
      this.requests.duplicateRefused(request.external_id);
      return undefined;
    }
    this.requests.created(request.external_id);
    const path = sandboxPath(request.patient, request.prescriber);
    return this.addPrescription(
      tenant,
      request.external_id,
      identityOfRequest(request),
      path,
      { kind: 'request', request },
      this.now(),
      apiVersion,
    );
  }

  /** The full request a prescription was received with. */
  requestOf(record: PrescriptionRecord): PrescriptionRequest {
    const source = record.source;
    return source.kind === 'request'
      ? source.request
      : samplePrescription(source.index, { prefix: source.prefix, rejected: source.rejected });
  }

  /** Flags a prescription for cancellation; a repeated request keeps the first time. */
  cancelPrescription(tenant: Tenant, externalId: string): PrescriptionRecord | undefined {
    const record = tenant.prescriptions.get(externalId);
    if (record && record.cancellationRequestedAt === null) record.cancellationRequestedAt = new Date(this.now()).toISOString();
    if (record) this.requests.cancelled(externalId);
    return record;
  }

  /**
   * POST /subscriptions through `apiVersion`'s path: its events carry that version. With backfill,
   * events already logged for matching prescriptions are published to it now.
   */
  createSubscription(
    tenant: Tenant,
    identity: PrescriptionIdentity,
    backfill: boolean | null,
    apiVersion = this.defaultVersion,
  ): SubscriptionRecord {
    const subscription = tenant.addSubscription(identity, backfill, apiVersion);
    if (backfill !== true) return subscription;
    const logged: Array<{ record: PrescriptionRecord; step: number; at: number }> = [];
    for (const record of tenant.prescriptions.values()) {
      if (record.identityKey !== subscription.identityKey || !erxCompatible(subscription.identity, record.identity)) continue;
      for (let step = 0; step < record.logged; step++) logged.push({ record, step, at: stepDueAt(record.receivedAt, step) });
    }
    logged.sort((a, b) => a.at - b.at || a.record.seq - b.record.seq || a.step - b.step);
    for (const { record, step } of logged) this.publishStep(record, step, [subscription], true);
    return subscription;
  }

  /** Cancels a subscription (idempotent: the first cancellation time is kept). */
  cancelSubscription(tenant: Tenant, id: string): SubscriptionRecord | undefined {
    const subscription = tenant.subscriptions.get(id);
    if (subscription && subscription.cancelledAt === null) subscription.cancelledAt = new Date(this.now()).toISOString();
    return subscription;
  }

  /**
   * Creates `count` fixture prescriptions (external_id `${prefix}-${i}`, i from 0) with
   * their auto subscriptions, received one second apart and long enough ago that all
   * their steps are due, and publishes them. No HTTP, no per-event objects.
   */
  seedBulk(options: SeedOptions): { prescriptions: number; events: number } {
    const tenant = this.tenantOf(options.key);
    const plan = seedPlan(options, this.now(), (id) => tenant.prescriptions.has(id));
    let events = 0;
    for (const p of plan) {
      events += this.addPrescription(tenant, p.externalId, p.identity, p.path, p.source, p.receivedAt, this.defaultVersion).path.length;
    }
    this.publishDue();
    return { prescriptions: plan.length, events };
  }

  /**
   * Appends arbitrary JSON values as-is to the feed `listingVersion`'s GET /events lists (default: the
   * default version's): hostile-feed tests, and events of a version the client does not know.
   */
  injectRawEvents(key: string, raws: readonly unknown[], listingVersion = this.defaultVersion): void {
    const feed = this.tenantOf(key).feedFor(listingVersion);
    for (const raw of raws) feed.appendRaw(JSON.stringify(raw) ?? 'null');
  }

  /** Counts for monitoring and tests (identifiers only, no PHI). */
  stats(): SandboxStats {
    return {
      now: new Date(this.now()).toISOString(),
      pending_prescriptions: this.queue.size,
      credentials: this.book.entries().map(([key, tenant]) => ({
        key,
        active: this.book.isActive(key),
        prescriptions: tenant.prescriptions.size,
        subscriptions: tenant.subscriptions.size,
        feed_entries: tenant.feedEntries,
      })),
      api_requests: this.apiRequests.toRecord(),
    };
  }
}
