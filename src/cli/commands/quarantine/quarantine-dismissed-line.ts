/**
 * What `quarantine dismiss` says: the finding, how many of its subscription closed with it, and the
 * scope in the words the operator console uses for the same choice: "the whole subscription" (the
 * default) or "this finding only" (--only-this-event).
 */
export function dismissedLine(eventId: string, reason: string, closed: number, onlyThisEvent = false): string {
  if (onlyThisEvent) return `dismissed ${eventId} (${reason}): this finding only`;
  const others = closed - 1;
  if (others <= 0) return `dismissed ${eventId} (${reason}): the whole subscription, which had no other open finding`;
  return `dismissed ${eventId} and ${others} other open finding${others === 1 ? '' : 's'} of its subscription (${reason}): the whole subscription, ${closed} in all`;
}
