/** The embedded store's directory is in use by another live process: PGlite serves one process at a time. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';

  constructor(
    readonly dataDir: string,
    readonly pid: number,
    readonly host: string,
  ) {
    super(
      `the embedded store ${dataDir} is in use by process ${pid} on ${host}: embedded PGlite serves one process at a time, ` +
        'and a second one would lose its writes. Stop that process first, or run both against PostgreSQL (set DATABASE_URL)',
    );
  }
}
