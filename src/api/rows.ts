/** A local prescription's status, as the view `prescription_status` has it. */
export interface PrescriptionStatus {
  external_id: string;
  /** the feed (operator account) it belongs to */
  feed: string;
  status: string | null;
  status_occurred_at: Date | null;
  cancellation_requested_at: Date | null;
  /** distinct events applied to it */
  events: number;
  updated_at: Date;
}

/** A request to the operator written through the outbox, as the view `outbox_status` has it. */
export interface OutboxEntry {
  external_id: string;
  /** the feed whose credentials deliver it */
  feed: string;
  kind: 'send' | 'cancel';
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  last_attempt_at: Date | null;
  completed_at: Date | null;
}
