import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { type DecodedPoint, type DecodedSpan, decodeMetricsRequest, decodeTraceRequest } from './otlp-protobuf.js';

type Json = Record<string, unknown>;

/** A real OTLP/HTTP receiver on loopback: what a Collector's otlp receiver accepts on 4318, decoded. */
export interface OtlpReceiver {
  /** http://127.0.0.1:<port>: OTEL_EXPORTER_OTLP_ENDPOINT */
  endpoint: string;
  /** every span received so far, either encoding */
  spans(): DecodedSpan[];
  /** every metric data point received so far */
  points(): DecodedPoint[];
  /** every request body as it arrived (after gzip), for the byte-by-byte PHI search */
  bodies(): Buffer[];
  /** the content types the exporter sent */
  contentTypes(): string[];
  close(): Promise<void>;
}

/** Starts the receiver on an ephemeral loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: DecodedSpan[] = [];
  const points: DecodedPoint[] = [];
  const bodies: Buffer[] = [];
  const types: string[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then(
      (body) => {
        const type = String(req.headers['content-type'] ?? '');
        types.push(type);
        bodies.push(body);
        const json = type.includes('json');
        if (req.url === '/v1/traces')
          spans.push(...(json ? jsonSpans(JSON.parse(body.toString('utf8')) as Json) : decodeTraceRequest(body)));
        else if (req.url === '/v1/metrics')
          points.push(...(json ? jsonPoints(JSON.parse(body.toString('utf8')) as Json) : decodeMetricsRequest(body)));
        else {
          res.writeHead(404).end();
          return;
        }
        // an empty Export*ServiceResponse: full success
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
      },
      () => res.writeHead(400).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    points: () => [...points],
    bodies: () => [...bodies],
    contentTypes: () => [...types],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

type Value = string | number | boolean;

function jsonValue(value: Json | undefined): Value {
  if (!value) return '';
  if ('stringValue' in value) return String(value.stringValue);
  if ('boolValue' in value) return Boolean(value.boolValue);
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  return JSON.stringify(value);
}

function jsonAttributes(list: unknown): Record<string, Value> {
  return Object.fromEntries(((list as Array<{ key: string; value: Json }>) ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
}

const list = (value: unknown) => (Array.isArray(value) ? (value as Json[]) : []);

/** The spans of an ExportTraceServiceRequest in OTLP/JSON (ids as hex, as the specification says). */
export function jsonSpans(request: Json): DecodedSpan[] {
  return list(request.resourceSpans).flatMap((rs) => {
    const resource = jsonAttributes((rs.resource as Json | undefined)?.attributes);
    return list(rs.scopeSpans).flatMap((ss) =>
      list(ss.spans).map((s) => ({
        traceId: String(s.traceId ?? ''),
        spanId: String(s.spanId ?? ''),
        parentSpanId: String(s.parentSpanId ?? ''),
        name: String(s.name ?? ''),
        kind: Number(s.kind ?? 0),
        attributes: jsonAttributes(s.attributes),
        events: list(s.events).map((e) => ({ name: String(e.name ?? ''), attributes: jsonAttributes(e.attributes) })),
        links: list(s.links).map((l) => ({
          traceId: String(l.traceId),
          spanId: String(l.spanId),
          attributes: jsonAttributes(l.attributes),
        })),
        status: { code: Number((s.status as Json | undefined)?.code ?? 0), message: String((s.status as Json | undefined)?.message ?? '') },
        resource,
        scope: String((ss.scope as Json | undefined)?.name ?? ''),
      })),
    );
  });
}

/** The data points of an ExportMetricsServiceRequest in OTLP/JSON. */
export function jsonPoints(request: Json): DecodedPoint[] {
  return list(request.resourceMetrics).flatMap((rm) =>
    list(rm.scopeMetrics).flatMap((sm) =>
      list(sm.metrics).flatMap((m) =>
        (['gauge', 'sum', 'histogram'] as const).flatMap((kind) =>
          list((m[kind] as Json | undefined)?.dataPoints).map((dp) => ({
            name: String(m.name),
            kind,
            attributes: jsonAttributes(dp.attributes),
            value: Number(kind === 'histogram' ? dp.count : (dp.asDouble ?? dp.asInt ?? 0)),
          })),
        ),
      ),
    ),
  );
}
