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

/** A prescription whose stage outlasted its feed's deadline, as the view `overdue_prescriptions` has it (no PHI). */
export interface OverduePrescription {
  feed: string;
  external_id: string;
  stage: 'sent' | 'accepted' | 'ordered' | 'dispensed' | 'cancel_requested';
  /** when the stage's clock started (the event's occurred_at, or the outbox delivery) */
  since: Date;
  /** how far past the deadline, in whole seconds */
  overdue_by_seconds: number;
}
