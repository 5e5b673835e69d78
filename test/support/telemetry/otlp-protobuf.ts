// A protobuf reader for the OTLP requests the receiver decodes (opentelemetry-proto, trace and metrics
// services): only the fields the tests read. The official @opentelemetry/otlp-transformer (0.301)
// encodes requests and decodes responses but has no request decoder, so this one is checked against
// its encoder (otlp-protobuf.test.ts): what ProtobufTraceSerializer writes decodes to what
// JsonTraceSerializer writes.

type Value = string | number | boolean;

/** One field of a message: its number, wire type and raw payload (varint value, or bytes). */
interface Field {
  no: number;
  varint?: bigint;
  bytes?: Uint8Array;
  fixed64?: Buffer;
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const b = buf[pos++] as number;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, bytes: buf.subarray(pos, pos + len) });
      pos += len;
    } else if (wire === 1) {
      out.push({ no, fixed64: Buffer.from(buf.subarray(pos, pos + 8)) });
      pos += 8;
    } else if (wire === 5) pos += 4;
    else throw new Error(`wire type ${wire} not expected in OTLP`);
  }
  return out;
}

const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');
const all = (list: Field[], no: number) => list.filter((f) => f.no === no);
const one = (list: Field[], no: number) => list.find((f) => f.no === no);

function anyValue(buf: Uint8Array): Value {
  const f = fields(buf)[0];
  if (!f) return '';
  if (f.no === 1) return text(f.bytes);
  if (f.no === 2) return f.varint === 1n;
  if (f.no === 3) return Number(BigInt.asIntN(64, f.varint ?? 0n));
  if (f.no === 4) return f.fixed64?.readDoubleLE(0) ?? 0;
  return `<${f.no}>`;
}

function attributes(list: Field[], no: number): Record<string, Value> {
  return Object.fromEntries(
    all(list, no).map((kv) => {
      const parts = fields(kv.bytes ?? new Uint8Array());
      return [text(one(parts, 1)?.bytes), anyValue(one(parts, 2)?.bytes ?? new Uint8Array())];
    }),
  );
}

/** A span as the tests read it, from either encoding. */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, Value>;
  events: Array<{ name: string; attributes: Record<string, Value> }>;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, Value> }>;
  status: { code: number; message: string };
  resource: Record<string, Value>;
  scope: string;
}

/** The spans of an ExportTraceServiceRequest in protobuf. */
export function decodeTraceRequest(body: Uint8Array): DecodedSpan[] {
  const spans: DecodedSpan[] = [];
  for (const rs of all(fields(body), 1)) {
    const rsFields = fields(rs.bytes ?? new Uint8Array());
    const resource = attributes(fields(one(rsFields, 1)?.bytes ?? new Uint8Array()), 1);
    for (const ss of all(rsFields, 2)) {
      const ssFields = fields(ss.bytes ?? new Uint8Array());
      const scope = text(one(fields(one(ssFields, 1)?.bytes ?? new Uint8Array()), 1)?.bytes);
      for (const sp of all(ssFields, 2)) {
        const s = fields(sp.bytes ?? new Uint8Array());
        const status = fields(one(s, 15)?.bytes ?? new Uint8Array());
        spans.push({
          traceId: hex(one(s, 1)?.bytes),
          spanId: hex(one(s, 2)?.bytes),
          parentSpanId: hex(one(s, 4)?.bytes),
          name: text(one(s, 5)?.bytes),
          kind: Number(one(s, 6)?.varint ?? 0n),
          attributes: attributes(s, 9),
          events: all(s, 11).map((e) => {
            const ef = fields(e.bytes ?? new Uint8Array());
            return { name: text(one(ef, 2)?.bytes), attributes: attributes(ef, 3) };
          }),
          links: all(s, 13).map((l) => {
            const lf = fields(l.bytes ?? new Uint8Array());
            return { traceId: hex(one(lf, 1)?.bytes), spanId: hex(one(lf, 2)?.bytes), attributes: attributes(lf, 4) };
          }),
          status: { code: Number(one(status, 3)?.varint ?? 0n), message: text(one(status, 2)?.bytes) },
          resource,
          scope,
        });
      }
    }
  }
  return spans;
}

/** A metric data point as the tests read it: the metric's name, its kind, the point's labels and value (count for a histogram). */
export interface DecodedPoint {
  name: string;
  kind: 'gauge' | 'sum' | 'histogram';
  attributes: Record<string, Value>;
  value: number;
}

/** The data points of an ExportMetricsServiceRequest in protobuf (gauges, sums, histograms). */
export function decodeMetricsRequest(body: Uint8Array): DecodedPoint[] {
  const points: DecodedPoint[] = [];
  for (const rm of all(fields(body), 1))
    for (const sm of all(fields(rm.bytes ?? new Uint8Array()), 2))
      for (const m of all(fields(sm.bytes ?? new Uint8Array()), 2)) {
        const mf = fields(m.bytes ?? new Uint8Array());
        const name = text(one(mf, 1)?.bytes);
        for (const [no, kind] of [
          [5, 'gauge'],
          [7, 'sum'],
          [9, 'histogram'],
        ] as const) {
          const data = one(mf, no);
          if (!data) continue;
          for (const dp of all(fields(data.bytes ?? new Uint8Array()), 1)) {
            const df = fields(dp.bytes ?? new Uint8Array());
            const value =
              kind === 'histogram'
                ? Number(one(df, 4)?.fixed64?.readBigUInt64LE(0) ?? 0n)
                : (one(df, 4)?.fixed64?.readDoubleLE(0) ?? Number(one(df, 6)?.fixed64?.readBigInt64LE(0) ?? 0n));
            points.push({ name, kind, attributes: attributes(df, kind === 'histogram' ? 9 : 7), value });
          }
        }
      }
  return points;
}
