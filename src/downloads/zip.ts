import { crc32, deflateRawSync } from 'node:zlib';

/**
 * A zip archive of a few files, written in memory: what the MT5 bridge package needs (no folders, no zip64, names in
 * UTF-8). Deterministic: the same files and date give the same bytes, so the package `make dist` writes and the one the
 * service builds from the same files are the same archive.
 */
export interface ZipEntry {
  name: string;
  data: Buffer;
}

function dosDateTime(at: Date): { time: number; date: number } {
  return {
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | Math.floor(at.getUTCSeconds() / 2),
    date: ((Math.max(at.getUTCFullYear(), 1980) - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
  };
}

const UTF8_NAMES = 0x0800;
const DEFLATE = 8;
const VERSION_NEEDED = 20;

export function zip(entries: ZipEntry[], at: Date): Buffer {
  const { time, date } = dosDateTime(at);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const packed = deflateRawSync(entry.data, { level: 9 });
    const crc = crc32(entry.data);
    // The local header and the directory entry share the run from "version needed" to the name's length.
    const shared = (header: Buffer, at: number) => {
      header.writeUInt16LE(VERSION_NEEDED, at);
      header.writeUInt16LE(UTF8_NAMES, at + 2);
      header.writeUInt16LE(DEFLATE, at + 4);
      header.writeUInt16LE(time, at + 6);
      header.writeUInt16LE(date, at + 8);
      header.writeUInt32LE(crc, at + 10);
      header.writeUInt32LE(packed.length, at + 14);
      header.writeUInt32LE(entry.data.length, at + 18);
      header.writeUInt16LE(name.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    shared(local, 4);
    // extra length: 0
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(VERSION_NEEDED, 4); // version made by
    shared(central, 6);
    // extra length, comment length, disk, internal and external attributes: all 0
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
