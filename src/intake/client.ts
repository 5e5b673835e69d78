import type { RequestBudget } from './request-budget.js';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { abortableSleep, type Sleep } from '../lib/abortable-sleep.js';
import { parseSecureBaseUrl } from './base-url.js';
import { EventsNotFoundError } from './errors/events-not-found-error.js';
import { NotFoundError } from './errors/not-found-error.js';
import { RequestValidationError } from './errors/request-validation-error.js';
import { schemaIssuesFrom, WHOLE_BODY_PATH } from './errors/schema-issues.js';
import { eventEnvelopeSchema, eventPageSchema, type CollectionMeta, type IntakeEvent } from './event.js';
import { EventsPageSkimmer, type SkimmedPage } from './events-page-skim.js';
import { HttpTransport, type TransportRequest } from './http-transport.js';
import { intakePaths, pathSegment } from './paths.js';
import {
  prescriptionEnvelopeSchema,
  prescriptionRequestSchema,
  type PrescriptionRequestInput,
  type PrescriptionResponse,
} from './prescription.js';
import { sendPrescriptionOnce, type SendOnceOptions } from './prescription-sending.js';
import { DEFAULT_RETRY_POLICY, type RetryMode } from './retry-policy.js';
import { RetryRunner, type RetryInfo } from './retry-runner.js';
import {
  createSubscriptionBodySchema,
  subscriptionEnvelopeSchema,
  type CreateSubscriptionBody,
  type Subscription,
} from './subscription.js';

export interface IntakeClientOptions {
  /** includes the version path, e.g. https://host/intake_api/2024-12-10 */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** per attempt, headers and body together (default 15000) */
  timeoutMs?: number;
  /** MAX_RESPONSE_BYTES: no response body is read past this (default DEFAULT_MAX_RESPONSE_BYTES, limits.ts) */
  maxResponseBytes?: number | undefined;
  retry?: { retries?: number; baseMs?: number; capMs?: number; maxElapsedMs?: number };
  logger?: Logger;
  /** uniform [0, 1); injected by tests for deterministic jitter */
  random?: () => number;
  /** the wait between attempts; injected by tests to observe delays */
  sleep?: Sleep;
  /** aborts every call of this client (e.g. on shutdown), in flight or sleeping */
  signal?: AbortSignal;
  /** called before each retry wait; for metrics (must not throw) */
  onRetry?: (info: RetryInfo) => void;
  /** this account's share of its operator host's request budget (OPERATOR_MAX_RPS); none: unlimited */
  requestBudget?: RequestBudget | undefined;
}

/** Per-call options: `signal` aborts the request in flight and any retry wait. */
export interface CallOptions {
  signal?: AbortSignal;
  /** called once a request of this call is written to the socket (the first attempt's, usually); a hint, see request-sent.ts */
  onSent?: () => void;
}

/** createPrescription's options: the call's signal, and how it continues an earlier send (the outbox). */
export interface CreatePrescriptionOptions extends CallOptions, SendOnceOptions {}

export interface ListEventsQuery {
  iterator?: string;
  /** 1..250; the operator's default (250) when omitted */
  limit?: number;
}

/** One page of the feed; events stay raw so each is validated (and quarantined) on its own. */
export interface EventPageResult {
  events: unknown[];
  meta: CollectionMeta;
}

export type { RetryInfo };

/** Typed client of the Prescription Intake API 2024-12-10: one method per operation, one retry layer. */
export class IntakeClient {
  readonly #transport: HttpTransport;
  readonly #runner: RetryRunner;
  readonly #logger: Logger | undefined;
  readonly #signal: AbortSignal | undefined;
  /** scheme, host and path of the base URL: what a configuration error names */
  readonly #shownBaseUrl: string;

  constructor(options: IntakeClientOptions) {
    const baseUrl = parseSecureBaseUrl(options.baseUrl);
    this.#shownBaseUrl = `${baseUrl.origin}${baseUrl.pathname.replace(/\/+$/, '')}`;
    const token = Buffer.from(`${options.apiKey}:${options.apiSecret}`, 'utf8').toString('base64');
    this.#transport = new HttpTransport({
      baseUrl,
      authorization: `Bearer ${token}`,
      timeoutMs: options.timeoutMs ?? 15_000,
      maxResponseBytes: options.maxResponseBytes,
      budget: options.requestBudget,
    });
    this.#logger = options.logger?.child({ component: 'intake-client' });
    this.#signal = options.signal;
    this.#runner = new RetryRunner({
      policy: { ...DEFAULT_RETRY_POLICY, ...definedOnly(options.retry ?? {}) },
      random: options.random ?? Math.random,
      sleep: options.sleep ?? abortableSleep,
      monotonicNow: () => performance.now(),
      logger: this.#logger,
      onRetry: options.onRetry,
      baseUrl,
    });
  }

  /** GET /events: one page from `iterator` (the start when omitted). */
  async listEvents(query: ListEventsQuery = {}, call: CallOptions = {}): Promise<EventPageResult> {
    const { limit, iterator } = query;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 250)) {
      throw new RequestValidationError('GET /events', [{ path: 'limit', message: 'must be an integer from 1 to 250' }]);
    }
    const searchParams: Record<string, string | number> = {};
    if (iterator !== undefined) searchParams.iterator = iterator;
    if (limit !== undefined) searchParams.limit = limit;
    const page = await this.#call('repeatable', call, {
      method: 'GET',
      path: intakePaths.events,
      searchParams,
      schema: eventPageSchema,
    }).catch((error: unknown) => {
      // the feed itself missing is the base URL's fault: a configuration error naming it, never retried
      throw error instanceof NotFoundError ? new EventsNotFoundError(this.#shownBaseUrl, error) : error;
    });
    return { events: page.events, meta: page.meta };
  }

  /**
   * GET /events read as a stream in constant memory, keeping only `meta`, the event count and the first
   * event's fingerprint (events-page-skim.ts): for a page too large to hold (`events skip`).
   */
  async skimEvents(query: ListEventsQuery, call: CallOptions = {}): Promise<SkimmedPage> {
    const searchParams: Record<string, string | number> = {};
    if (query.iterator !== undefined) searchParams.iterator = query.iterator;
    if (query.limit !== undefined) searchParams.limit = query.limit;
    const signal = this.#signalFor(call);
    const request = { path: intakePaths.events, searchParams, signal };
    return this.#runner.run(
      'repeatable',
      { method: 'GET', path: intakePaths.events },
      () => this.#transport.stream(request, skimBody),
      signal,
    );
  }

  /** GET /events/{id}. */
  async getEvent(id: string, call: CallOptions = {}): Promise<IntakeEvent> {
    const body = await this.#call('repeatable', call, { method: 'GET', path: intakePaths.event(id), schema: eventEnvelopeSchema });
    return body.event;
  }

  /**
   * POST /subscriptions. Retried only when the request surely never reached
   * the operator (connection refused, 429): without an idempotency key a
   * repeat after a timeout could create a second subscription.
   */
  async createSubscription(subscription: CreateSubscriptionBody['subscription'], call: CallOptions = {}): Promise<Subscription> {
    const body = validateRequest('POST /subscriptions', createSubscriptionBodySchema, { subscription });
    const created = await this.#call('unrepeatable', call, {
      method: 'POST',
      path: intakePaths.subscriptions,
      json: body,
      schema: subscriptionEnvelopeSchema,
    });
    return created.subscription;
  }

  /** GET /subscriptions/{id}. */
  async getSubscription(id: string, call: CallOptions = {}): Promise<Subscription> {
    const body = await this.#call('repeatable', call, {
      method: 'GET',
      path: intakePaths.subscription(id),
      schema: subscriptionEnvelopeSchema,
    });
    return body.subscription;
  }

  /** DELETE /subscriptions/{id}: returns the subscription with `cancelled_at` set. */
  async cancelSubscription(id: string, call: CallOptions = {}): Promise<Subscription> {
    const body = await this.#call('repeatable', call, {
      method: 'DELETE',
      path: intakePaths.subscription(id),
      schema: subscriptionEnvelopeSchema,
    });
    return body.subscription;
  }

  /**
   * POST /prescriptions, validated locally first (RequestValidationError, nothing
   * sent). After an ambiguous failure it reconciles by external_id instead of
   * blindly re-posting; see sendPrescriptionOnce.
   */
  async createPrescription(prescription: PrescriptionRequestInput, call: CreatePrescriptionOptions = {}): Promise<PrescriptionResponse> {
    const body = validateRequest('POST /prescriptions', prescriptionRequestSchema, prescription, 'prescription');
    // an external_id that cannot be one path segment could never be looked up or cancelled: refused before sending
    pathSegment('POST /prescriptions', 'prescription.external_id', body.external_id);
    const { signal, ...sendOptions } = call;
    return sendPrescriptionOnce(
      { transport: this.#transport, runner: this.#runner, logger: this.#logger },
      body,
      this.#signalFor({ signal }),
      sendOptions,
    );
  }

  /** GET /prescriptions/{external_id}. */
  async getPrescription(externalId: string, call: CallOptions = {}): Promise<PrescriptionResponse> {
    const body = await this.#call('repeatable', call, {
      method: 'GET',
      path: intakePaths.prescription(externalId),
      schema: prescriptionEnvelopeSchema,
    });
    return body.prescription;
  }

  /** DELETE /prescriptions/{external_id}: flags it for cancellation, returns it with `cancellation_requested_at`. */
  async cancelPrescription(externalId: string, call: CallOptions = {}): Promise<PrescriptionResponse> {
    const body = await this.#call('repeatable', call, {
      method: 'DELETE',
      path: intakePaths.prescription(externalId),
      schema: prescriptionEnvelopeSchema,
    });
    return body.prescription;
  }

  #call<T>(mode: RetryMode, call: CallOptions, request: Omit<TransportRequest<T>, 'signal'>): Promise<T> {
    const signal = this.#signalFor(call);
    const context = { method: request.method, path: request.path };
    const onSent = call.onSent;
    let reported = false;
    // once per call, whichever attempt goes out first
    const sent = onSent
      ? () => {
          if (reported) return;
          reported = true;
          onSent();
        }
      : undefined;
    return this.#runner.run(mode, context, () => this.#transport.send({ ...request, signal, ...(sent ? { onSent: sent } : {}) }), signal);
  }

  #signalFor(call: CallOptions): AbortSignal | undefined {
    const signals = [this.#signal, call.signal].filter((s): s is AbortSignal => s !== undefined);
    return signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  }
}

function validateRequest<S extends z.ZodType>(operation: string, schema: S, value: unknown, pathPrefix?: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = schemaIssuesFrom(parsed.error).map((issue) => ({
    ...issue,
    path: prefixPath(pathPrefix, issue.path),
  }));
  throw new RequestValidationError(operation, issues);
}

// report request paths as the operator would (`prescription.patient.dob`)
function prefixPath(prefix: string | undefined, path: string): string {
  if (!prefix) return path;
  return path === WHOLE_BODY_PATH ? prefix : `${prefix}.${path}`;
}

// `{ retries: undefined }` must not override the default
function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}

// the body of a GET /events read by EventsPageSkimmer, chunk by chunk
async function skimBody(body: ReadableStream<Uint8Array>): Promise<SkimmedPage> {
  const skimmer = new EventsPageSkimmer();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) skimmer.push(chunk);
  return skimmer.result();
}
