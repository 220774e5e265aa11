import { addDescriptors, type Descriptors } from '../helpers/protobuf-descriptor';

/** A FileDescriptorProto made by hand, written as protoc writes it into a `_pb2.py`, read back. */

const varint = (n: number) => {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return out;
};
const field = (no: number, value: number | number[] | string): number[] => {
  if (typeof value === 'number') return [...varint(no * 8), ...varint(value)];
  const bytes = typeof value === 'string' ? [...Buffer.from(value)] : value;
  return [...varint(no * 8 + 2), ...varint(bytes.length), ...bytes];
};

/** Python's bytes literal as protoc writes it: printable ASCII kept, the rest as \xHH, with octal and \n escapes mixed in. */
function pythonLiteral(bytes: number[]): string {
  return bytes
    .map((b, i) => {
      if (b === 10) return '\\n';
      if (b === 39) return "\\'";
      if (b === 92) return '\\\\';
      if (b >= 32 && b < 127) return String.fromCharCode(b);
      return i % 2 === 0 ? `\\${b.toString(8).padStart(3, '0')}` : `\\x${b.toString(16).padStart(2, '0')}`;
    })
    .join('');
}

describe('protoc Python output read as descriptors', () => {
  test('when a file holds an enum and a message, then their values, labels and types are read', () => {
    const enumType = [...field(1, 'ProtoOASide'), ...field(2, [...field(1, 'BUY'), ...field(2, 1)]), ...field(2, [...field(1, 'SELL'), ...field(2, 300)])];
    const message = [
      ...field(1, 'ProtoOAOrder'),
      ...field(2, [...field(1, 'orderId'), ...field(3, 1), ...field(4, 2), ...field(5, 3)]),
      ...field(2, [...field(1, 'tradeData'), ...field(3, 2), ...field(4, 1), ...field(5, 11), ...field(6, '.ProtoOATradeData')]),
      ...field(2, [...field(1, "it's"), ...field(3, 3), ...field(4, 3), ...field(5, 9)]),
    ];
    const file = [...field(1, 'OpenApiModelMessages.proto'), ...field(5, enumType), ...field(4, message)];
    const source = `DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(b'${pythonLiteral(file)}')\n`;
    const into: Descriptors = { enums: new Map(), messages: new Map() };
    addDescriptors(source, into);
    expect(into.enums.get('ProtoOASide')).toEqual(
      new Map([
        ['BUY', 1],
        ['SELL', 300],
      ]),
    );
    expect(into.messages.get('ProtoOAOrder')).toEqual(
      new Map([
        ['orderId', { label: 'required', type: 'int64' }],
        ['tradeData', { label: 'optional', type: 'ProtoOATradeData' }],
        ["it's", { label: 'repeated', type: 'string' }],
      ]),
    );
  });

  test('when a file has no serialized descriptor, then reading it fails', () => {
    expect(() => addDescriptors('print(1)\n', { enums: new Map(), messages: new Map() })).toThrow(/AddSerializedFile/);
  });
});
