/**
 * The stages a prescription can stall in, in lifecycle order, as overdue_prescriptions reports them
 * (docs/operations.md, "Overdue prescriptions"). `delivered` and `rejected` are terminal and have no deadline.
 */
export const OVERDUE_STAGES = ['sent', 'accepted', 'ordered', 'dispensed', 'cancel_requested'] as const;
export type OverdueStage = (typeof OVERDUE_STAGES)[number];

/** Each stage's deadline in ms; null: the stage is `off` (never overdue). */
export type StageDeadlines = Readonly<Record<OverdueStage, number | null>>;
