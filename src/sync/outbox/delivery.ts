import type { Db } from '../../db/connection.js';
import type { IntakeClient } from '../../intake/client.js';
import { schemaIssuesFrom } from '../../intake/errors/schema-issues.js';
import { MAX_API_BODY_BYTES } from '../../intake/limits.js';
import { prescriptionRequestSchema } from '../../intake/prescription.js';
import type { Logger } from '../../log/log.js';
import { markCancellationRequested, recordSentPrescription } from '../matching/sent-prescriptions.js';
import { cancelPrecondition, outcomeOfError, rowAfter, type DeliveryOutcome, type OutboxBackoff } from './decisions.js';
import { claimAttempt, failUnsent, sendBody, settleRow, type Claim, type DueRow } from './store.js';
import { activeTraceparent, addEvent, inSpan, linkTo, setAttributes, SpanKind, type Span } from '../../telemetry/spans.js';

export type OutboxClient = Pick<IntakeClient, 'createPrescription' | 'cancelPrescription'>;

export interface OutboxDeliveryDeps {
  db: Db;
  /** the feed whose rows these are; `client` holds that feed's credentials */
  feed: string;
  /** the configured base URL's client: for a row with no URL fixed (no source recorded, none configured) */
  client: OutboxClient;
  /** the configured base URL: what a row goes through when the feed has no recorded current source */
  configuredBaseUrl?: string;
  /** the client for the base URL a claim fixed on the row (API version migration); default: `client` */
  clientFor?(baseUrl: string): OutboxClient;
  backoff: OutboxBackoff;
  random: () => number;
  log: Logger;
}

/**
 * Delivers one head-of-line row: claim (committed before the request), send, settle. Exactly once
 * in effect: a send that may have landed before (in doubt) looks the external_id up first, and
 * the operator refuses a second prescription under one external_id.
 */
export async function deliverRow(deps: OutboxDeliveryDeps, row: DueRow, signal: AbortSignal): Promise<void> {
  const { db, log } = deps;
  if (row.kind === 'cancel') {
    const precondition = cancelPrecondition(row.previousSend);
    if (precondition.action === 'wait') return;
    if (precondition.action === 'fail') {
      await failUnsent(db, row.id, precondition.reason);
      log.warn({ outbox_id: row.id, external_id: row.externalId, kind: row.kind }, `outbox row failed: ${precondition.reason}`);
      return;
    }
  }
  await inSpan(
    'process outbox',
    {
      kind: SpanKind.CONSUMER,
      root: true,
      attributes: {
        'messaging.system': 'intake_sync',
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'deliver',
        'messaging.destination.name': 'outbox',
        'messaging.message.id': String(row.id),
        'intake_sync.feed': deps.feed,
        'intake_sync.outbox.kind': row.kind,
      },
    },
    (span) => claimAndSend(deps, row, signal, span),
  );
}

// one delivery attempt in its span: the claim (which records the span for the page that answers it),
// the request, the settle; a retry later is an event on this span, the next attempt a span of its own
async function claimAndSend(deps: OutboxDeliveryDeps, row: DueRow, signal: AbortSignal, span: Span): Promise<void> {
  const { db, log } = deps;
  const claim = await claimAttempt(db, row.id, deps.feed, deps.configuredBaseUrl ?? null, activeTraceparent() ?? null);
  if (!claim) return;
  // the app's transaction that queued the row: a link, as the delivery is not part of that transaction
  const app = linkTo(claim.traceparent, 'app');
  if (app && span.isRecording()) span.addLink(app);
  setAttributes(span, { 'intake_sync.outbox.attempt': claim.attempt });
  const outcome = await attempt(deps, row, claim, signal);
  const update = rowAfter(outcome, claim.attempt, deps.backoff, deps.random);
  if (!update) return;
  setAttributes(span, { 'intake_sync.outbox.outcome': update.state });
  if (update.responseStatus !== null && update.responseStatus !== undefined)
    setAttributes(span, { 'http.response.status_code': update.responseStatus });
  if (update.retryInMs !== null)
    addEvent(span, 'retry scheduled', { 'intake_sync.outbox.attempt': claim.attempt, 'intake_sync.retry.delay_ms': update.retryInMs });
  const settled = await settleRow(db, row.id, claim.attempt, update);
  const context = {
    outbox_id: row.id,
    external_id: row.externalId,
    kind: row.kind,
    attempt: claim.attempt,
    state: update.state,
    status: update.responseStatus,
  };
  if (!settled) log.warn(context, 'outbox row was claimed again meanwhile (another leader): its attempt decides');
  else if (update.state === 'delivered') log.info(context, 'outbox row delivered');
  else if (update.state === 'failed') log.warn({ ...context, reason: update.lastError }, 'outbox row failed: not retried');
  else log.info({ ...context, reason: update.lastError, retryInMs: update.retryInMs }, 'outbox row not delivered yet: retrying later');
}

async function attempt(deps: OutboxDeliveryDeps, row: DueRow, claim: Claim, signal: AbortSignal): Promise<DeliveryOutcome> {
  const { db } = deps;
  // exactly the URL the claim fixed: a migration that started since sees this row through it
  const client = claim.sentThrough !== null && deps.clientFor ? deps.clientFor(claim.sentThrough) : deps.client;
  try {
    if (row.kind === 'cancel') {
      const response = await client.cancelPrescription(row.externalId, { signal });
      await markCancellationRequested(db, row.externalId, response.cancellation_requested_at ?? new Date().toISOString(), {
        feed: deps.feed,
      });
      return { kind: 'delivered', status: 200 };
    }
    const loaded = await sendBody(db, row.id, MAX_API_BODY_BYTES);
    if (!loaded || loaded.tooLarge)
      return {
        kind: 'refused',
        status: null,
        reason: loaded
          ? `refused by the client before sending: prescription over ${MAX_API_BODY_BYTES} bytes of JSON (${loaded.bytes}), queued before the cap`
          : 'refused by the client before sending: the row has no body',
      };
    const parsed = prescriptionRequestSchema.safeParse(loaded.body);
    if (!parsed.success) {
      // send_prescription validated it: only a client stricter than the database's rules gets here
      const paths = schemaIssuesFrom(parsed.error).map((i) => `prescription.${i.path}`);
      return { kind: 'refused', status: null, reason: `refused by the client before sending: invalid ${paths.join(', ')}` };
    }
    let found = false;
    const response = await client.createPrescription(parsed.data, {
      signal,
      mayHaveLanded: claim.wasInDoubt,
      requireSameFields: true,
      onFoundExisting: () => {
        found = true;
      },
    });
    // its events must match: recorded before the row is settled (a kill in between re-records, idempotently)
    await recordSentPrescription(db, parsed.data, response, undefined, { feed: deps.feed });
    return { kind: 'delivered', status: found ? 200 : 201 };
  } catch (error) {
    return outcomeOfError(row.kind, error, signal.aborted);
  }
}
