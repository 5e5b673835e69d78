/** How a refused SQL API call is shown: its HTTP status and a message without any value in it. */
export interface SqlProblem {
  status: 400 | 403 | 404 | 409 | 500;
  message: string;
}

/**
 * Maps a SQL API error to what the user sees. The API's messages name the field and the rule,
 * never the value (docs/sql-api/triage.md), so they are shown for input errors; anything else is
 * a generic failure (the log keeps the SQLSTATE only). Pure.
 */
export function sqlProblem(error: unknown): SqlProblem {
  // a refusal of a triage call comes as TriageRefusedError (src/store-api/triage/), its SQLSTATE as sqlState
  const code = (error as { code?: unknown } | null)?.code ?? (error as { sqlState?: unknown } | null)?.sqlState;
  const message = String((error as { message?: unknown } | null)?.message ?? '');
  switch (code) {
    case '42501':
      return { status: 403, message: 'Your role may not do this (permission denied).' };
    case 'P0002':
      // a Resolve naming an external_id the feed does not have is the user's input, not a missing page
      if (message.startsWith('external_id:')) return { status: 400, message: message.slice(0, 300) };
      return { status: 404, message: 'Not found.' };
    case '42704':
      return { status: 404, message: 'Not found.' };
    case '22023':
    case '23502':
      return { status: 400, message: message.slice(0, 300) };
    case '55000':
      return { status: 409, message: message.slice(0, 300) };
    default:
      return { status: 500, message: 'The database refused the request; the console log names the error code.' };
  }
}
