/**
 * Reads protoc's Python output (`*_pb2.py`) as the descriptors it embeds: each file holds its FileDescriptorProto,
 * serialized, as a Python bytes literal passed to `AddSerializedFile(b'…')`. Only what the cTrader checks need is
 * decoded: top-level enums (name → number) and messages (field → label and type), from descriptor.proto's numbers.
 */

export interface DescriptorField {
  label: 'required' | 'optional' | 'repeated';
  type: string;
}

export interface Descriptors {
  enums: Map<string, Map<string, number>>;
  messages: Map<string, Map<string, DescriptorField>>;
}

const SIMPLE_ESCAPES: Record<string, number> = { n: 10, r: 13, t: 9, '\\': 92, "'": 39, '"': 34 };

/** The bytes of the literal in `AddSerializedFile(b'…')`: \xHH, octal \NNN and the one-letter escapes. */
function serializedFileOf(source: string): Buffer {
  const literal = /AddSerializedFile\(b'((?:[^'\\]|\\.)*)'\)/.exec(source)?.[1];
  if (literal === undefined) throw new Error("no AddSerializedFile(b'…') in this file");
  const out: number[] = [];
  for (let i = 0; i < literal.length; i++) {
    const c = literal[i]!;
    if (c !== '\\') {
      out.push(c.charCodeAt(0));
      continue;
    }
    const d = literal[++i]!;
    if (d === 'x') {
      out.push(parseInt(literal.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (/[0-7]/.test(d)) {
      const octal = /^[0-7]{1,3}/.exec(literal.slice(i))![0];
      out.push(parseInt(octal, 8));
      i += octal.length - 1;
    } else if (d in SIMPLE_ESCAPES) out.push(SIMPLE_ESCAPES[d]!);
    else throw new Error(`unknown escape \\${d}`);
  }
  return Buffer.from(out);
}

type WireField = [number, number | Buffer];

/** The top-level fields of one protobuf message: varints as numbers, length-delimited ones as bytes. */
function wireFields(buf: Buffer): WireField[] {
  const fields: WireField[] = [];
  let at = 0;
  const varint = () => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const b = buf[at++]!;
      value += (b & 0x7f) * scale;
      scale *= 128;
      if (b < 0x80) return value;
    }
  };
  while (at < buf.length) {
    const key = varint();
    const wire = key & 7;
    const no = Math.floor(key / 8);
    if (wire === 0) fields.push([no, varint()]);
    else if (wire === 2) {
      const length = varint();
      fields.push([no, buf.subarray(at, at + length)]);
      at += length;
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else throw new Error(`wire type ${wire} is not in a descriptor`);
  }
  return fields;
}

const text = (v: number | Buffer | undefined) => (v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
const bytes = (v: number | Buffer) => (Buffer.isBuffer(v) ? v : Buffer.alloc(0));
const LABELS = { 1: 'optional', 2: 'required', 3: 'repeated' } as const;
/** FieldDescriptorProto.Type for scalars; message and enum fields carry their type_name instead. */
const SCALARS: Record<number, string> = {
  1: 'double',
  2: 'float',
  3: 'int64',
  4: 'uint64',
  5: 'int32',
  6: 'fixed64',
  7: 'fixed32',
  8: 'bool',
  9: 'string',
  12: 'bytes',
  13: 'uint32',
  15: 'sfixed32',
  16: 'sfixed64',
  17: 'sint32',
  18: 'sint64',
};

type Fields = Map<number, number | Buffer>;

/** A descriptor with a name (field 1) and a list (field 2: an enum's values, a message's fields), read by `item`. */
function namedList<T>(buf: Buffer, item: (fields: Fields) => T): [string, Map<string, T>] {
  let name = '';
  const items = new Map<string, T>();
  for (const [no, v] of wireFields(buf)) {
    if (no === 1) name = text(v);
    if (no !== 2) continue;
    const fields: Fields = new Map(wireFields(bytes(v)));
    items.set(text(fields.get(1)), item(fields));
  }
  return [name, items];
}

const enumValue = (value: Fields) => Number(value.get(2) ?? 0);

function messageField(field: Fields): DescriptorField {
  const typeName = field.get(6);
  return {
    label: LABELS[Number(field.get(4)) as 1 | 2 | 3],
    type: typeName === undefined ? SCALARS[Number(field.get(5))]! : text(typeName).replace(/^\./, ''),
  };
}

/** Adds the enums (FileDescriptorProto field 5) and messages (field 4) of one `_pb2.py` source to `into`. */
export function addDescriptors(source: string, into: Descriptors): void {
  for (const [no, v] of wireFields(serializedFileOf(source))) {
    if (no === 5) into.enums.set(...namedList(bytes(v), enumValue));
    if (no === 4) into.messages.set(...namedList(bytes(v), messageField));
  }
}
