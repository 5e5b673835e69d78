// An OTLP/HTTP sink for the tracing-cost runs (docs/performance.md, "Tracing cost"): answers every export
// with an empty success, counts requests and bytes, and prints them at SIGINT/SIGTERM. Loopback only.
// `node --import tsx bench/otlp-sink.ts [port]` (default 4318), then OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 4318);
if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('usage: otlp-sink.ts [port 1-65535]');
const counts = { requests: 0, bytes: 0, spansRequests: 0, metricsRequests: 0 };
const server = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => {
    counts.bytes += chunk.length;
  });
  req.on('end', () => {
    counts.requests += 1;
    if (req.url === '/v1/traces') counts.spansRequests += 1;
    if (req.url === '/v1/metrics') counts.metricsRequests += 1;
    const json = String(req.headers['content-type'] ?? '').includes('json');
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
});
server.listen(port, '127.0.0.1');
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    process.stdout.write(`${JSON.stringify(counts)}\n`);
    server.close(() => process.exit(0));
  });
