/** What `quarantine dismiss` says: the finding, and how many of its subscription closed with it. */
export function dismissedLine(eventId: string, reason: string, closed: number): string {
  const others = closed - 1;
  if (others <= 0) return `dismissed ${eventId} (${reason})`;
  return `dismissed ${eventId} and ${others} other open finding${others === 1 ? '' : 's'} of its subscription (${reason}): ${closed} in all`;
}
