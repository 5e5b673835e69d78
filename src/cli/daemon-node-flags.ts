/**
 * V8 flags the daemon is launched with: package.json "start", the Dockerfile ENTRYPOINT and the
 * bench's drain worker all pass them (a test keeps the three in step). A 4 MB young generation
 * (V8's default semi-space is 16 MB) keeps the resident set near the live set: on a 600k-event
 * drain, peak RSS 156 MB instead of 190, at the same throughput. Nothing caps the old space, so a
 * page of very large payloads still fits.
 */
export const DAEMON_NODE_FLAGS = ['--max-semi-space-size=4'] as const;
