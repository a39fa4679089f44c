// Shared by the detection and format tests.
import { deflateRawSync } from 'node:zlib';

/** A one-entry ZIP archive holding `note.bin` and no Office part: what file-type calls a plain (or damaged Office) zip. */
export function oneEntryZip(): Buffer {
  const name = Buffer.from('note.bin');
  const data = deflateRawSync(Buffer.from('hello zip'));
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(8, 8);
  header.writeUInt32LE(data.length, 18);
  header.writeUInt32LE(9, 22);
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, name, data]);
}
