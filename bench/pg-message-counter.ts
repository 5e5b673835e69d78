/** Frontend messages counted on one or more Postgres connections. */
export interface PgMessageCounts {
  /** 'Q' messages: simple-protocol queries (the lease's) */
  simpleQueries: number;
  /** 'E' messages: extended-protocol executions of a prepared or unnamed statement (the pool's, the page client's) */
  executes: number;
}

// untyped messages before the StartupMessage: SSLRequest and GSSENCRequest are answered with one byte, then the client starts over
const NEGOTIATION_CODES = new Set([80_877_103, 80_877_104]);

/**
 * A streaming reader of what a Postgres client sends (protocol 3): counts statements as the server will
 * execute them, one per Query or Execute message, whatever the chunking. Message bodies are skipped,
 * never buffered, so a page's large Bind costs nothing here.
 */
export function pgMessageCounter(counts: PgMessageCounts): (chunk: Buffer) => void {
  let startup = true;
  // bytes of the current header read so far (untyped: 8 = length + code; typed: 5 = type + length)
  let header = Buffer.alloc(0);
  let skip = 0;
  return (chunk) => {
    let offset = 0;
    while (offset < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - offset);
        skip -= n;
        offset += n;
        continue;
      }
      const need = startup ? 8 : 5;
      const n = Math.min(need - header.length, chunk.length - offset);
      header = Buffer.concat([header, chunk.subarray(offset, offset + n)]);
      offset += n;
      if (header.length < need) return;
      if (startup) {
        const length = header.readInt32BE(0);
        const code = header.readInt32BE(4);
        skip = length - 8;
        if (!NEGOTIATION_CODES.has(code)) startup = false;
      } else {
        const type = String.fromCharCode(header[0] ?? 0);
        if (type === 'Q') counts.simpleQueries++;
        else if (type === 'E') counts.executes++;
        skip = header.readInt32BE(1) - 4;
      }
      header = Buffer.alloc(0);
    }
  };
}
