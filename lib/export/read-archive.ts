/**
 * Reads an evidence bundle's `.tar.gz` into memory, strictly (decision 0037): gzip through the standard
 * `DecompressionStream` (Node ≥ 18 and browsers), then a plain POSIX ustar reader that accepts regular files with valid
 * bundle names and refuses everything else (links, directories, devices, pax/GNU extension headers, `..` or absolute
 * paths, duplicate names, files or archives over the limits, truncation). Pure: nothing is written anywhere.
 */
import { BUNDLE_LIMITS, isBundleName } from "./bundle-format";

/** Why an archive was refused: a sentence for people, and the entry it concerns when there is one. */
export class ArchiveError extends Error {
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(message);
  }
}

export type ArchiveLimits = { maxFileBytes: number; maxTotalBytes: number; maxFiles: number };

/** The archive's files in archive order, by name. */
export type ArchiveFiles = Map<string, Uint8Array>;

/**
 * Gunzips `gz` (bytes or a byte stream) and reads its tar entries.
 * @throws ArchiveError with a sentence naming what is wrong (never another error for bad input).
 */
export async function readBundleArchive(
  gz: Uint8Array | ReadableStream<Uint8Array>,
  limits: ArchiveLimits = BUNDLE_LIMITS,
): Promise<ArchiveFiles> {
  const tarBytes = await gunzip(gz, limits.maxTotalBytes + 1024 * 1024, headerScanner(limits));
  return readTar(tarBytes, limits);
}

/**
 * Checks each tar header as soon as its bytes are unpacked, so a symlink, a bad name or a file over the limit is refused
 * before the rest of the archive is unpacked into memory.
 */
function headerScanner(limits: ArchiveLimits): (chunks: Uint8Array[], total: number) => void {
  let next = 0;
  let index = 0;
  let ended = false;
  let chunkAt = 0;
  let chunkStart = 0;
  const block = new Uint8Array(512);
  return (chunks, total) => {
    while (!ended && total >= next + 512) {
      // Copy the 512 bytes at `next` out of the chunk list (offsets only grow).
      while (chunkStart + chunks[chunkAt]!.length <= next) chunkStart += chunks[chunkAt++]!.length;
      let filled = 0;
      let ci = chunkAt;
      let offset = next - chunkStart;
      while (filled < 512) {
        const c = chunks[ci]!;
        const n = Math.min(512 - filled, c.length - offset);
        block.set(c.subarray(offset, offset + n), filled);
        filled += n;
        ci++;
        offset = 0;
      }
      const header = parseHeader(block, index++, limits);
      if (!header) {
        ended = true;
        return;
      }
      next += 512 + Math.ceil(header.size / 512) * 512;
    }
  };
}

async function gunzip(
  gz: Uint8Array | ReadableStream<Uint8Array>,
  cap: number,
  scan: (chunks: Uint8Array[], total: number) => void,
): Promise<Uint8Array> {
  const source = gz instanceof Uint8Array ? new Blob([gz as Uint8Array<ArrayBuffer>]).stream() : gz;
  const reader = source.getReader();
  const first = await reader.read().catch(() => ({ done: true, value: undefined }));
  if (first.done || !first.value || first.value.length < 2 || first.value[0] !== 0x1f || first.value[1] !== 0x8b) {
    reader.releaseLock();
    throw new ArchiveError("This is not a gzip file (a bundle is a .tar.gz).");
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const inflate = new DecompressionStream("gzip");
  const writer = inflate.writable.getWriter();
  const feed = (async () => {
    await writer.write(first.value as Uint8Array<ArrayBuffer>);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await writer.write(value as Uint8Array<ArrayBuffer>);
    }
    await writer.close();
  })();
  feed.catch(() => undefined);
  const out = inflate.readable.getReader();
  try {
    for (;;) {
      const { done, value } = await out.read();
      if (done) break;
      total += value.length;
      if (total > cap) {
        throw new ArchiveError(`The archive unpacks to more than ${cap} bytes, over the bundle limit.`);
      }
      chunks.push(value);
      scan(chunks, total);
    }
    await feed;
  } catch (err) {
    await out.cancel().catch(() => undefined);
    if (err instanceof ArchiveError) throw err;
    throw new ArchiveError("The gzip stream is truncated or corrupt: the bundle is incomplete.");
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return bytes;
}

const ascii = new TextDecoder("utf-8", { fatal: false });

function field(block: Uint8Array, start: number, length: number): string {
  const slice = block.subarray(start, start + length);
  const end = slice.indexOf(0);
  return ascii.decode(end === -1 ? slice : slice.subarray(0, end));
}

function octal(block: Uint8Array, start: number, length: number): number | null {
  const text = field(block, start, length).trim();
  if (!/^[0-7]+$/.test(text)) return text === "" ? 0 : null;
  return parseInt(text, 8);
}

const TYPES: Record<string, string> = {
  "1": "a hard link",
  "2": "a symbolic link",
  "3": "a character device",
  "4": "a block device",
  "5": "a directory",
  "6": "a FIFO",
  "7": "a contiguous file",
  x: "a pax extended header",
  g: "a pax global header",
  L: "a GNU long-name header",
  K: "a GNU long-link header",
};

/**
 * Checks one tar header (the `index`-th entry): a plain ustar regular file with a valid bundle name within the limits.
 * @returns its name and size, or null for the end-of-archive block.
 * @throws ArchiveError naming what is wrong.
 */
function parseHeader(block: Uint8Array, index: number, limits: ArchiveLimits): { name: string; size: number } | null {
  if (block.every((b) => b === 0)) return null;
  const name0 = field(block, 0, 100);
  const prefix = field(block, 345, 155);
  const name = prefix ? `${prefix}/${name0}` : name0;
  const magic = field(block, 257, 6);
  if (!magic.startsWith("ustar")) throw new ArchiveError(`Entry ${index + 1} is not a ustar header.`, name);
  const sum = octal(block, 148, 8);
  let computed = 0;
  for (let i = 0; i < 512; i++) computed += i >= 148 && i < 156 ? 32 : block[i]!;
  if (sum !== computed) throw new ArchiveError(`The tar header of "${name}" is corrupt (checksum).`, name);
  const type = String.fromCharCode(block[156]!);
  if (type !== "0" && type !== "\0") {
    throw new ArchiveError(
      `"${name}" is ${TYPES[type] ?? `an entry of type '${type}'`}: a bundle holds only regular files.`,
      name,
    );
  }
  if (name.startsWith("/")) throw new ArchiveError(`"${name}" is an absolute path: refused.`, name);
  if (name.split("/").includes("..")) throw new ArchiveError(`"${name}" leaves the bundle ('..'): refused.`, name);
  if (!isBundleName(name)) throw new ArchiveError(`"${name}" is not a valid bundle file name.`, name);
  const size = octal(block, 124, 12);
  if (size === null) throw new ArchiveError(`The tar header of "${name}" has no valid size.`, name);
  if (size > limits.maxFileBytes) {
    throw new ArchiveError(`"${name}" is ${size} bytes, over the ${limits.maxFileBytes}-byte file limit.`, name);
  }
  if (index + 1 > limits.maxFiles) throw new ArchiveError(`The archive holds more than ${limits.maxFiles} files.`);
  return { name, size };
}

/** Reads plain ustar regular files. @throws ArchiveError */
function readTar(tar: Uint8Array, limits: ArchiveLimits): ArchiveFiles {
  const files: ArchiveFiles = new Map();
  let at = 0;
  let total = 0;
  for (;;) {
    if (at + 512 > tar.length) throw new ArchiveError("The tar archive is truncated: it ends without its end marker.");
    const header = parseHeader(tar.subarray(at, at + 512), files.size, limits);
    if (!header) return files;
    const { name, size } = header;
    if (files.has(name)) throw new ArchiveError(`"${name}" appears twice in the archive.`, name);
    total += size;
    if (total > limits.maxTotalBytes) throw new ArchiveError("The archive's files exceed the bundle size limit.", name);
    const start = at + 512;
    if (start + size > tar.length) throw new ArchiveError(`"${name}" is truncated.`, name);
    files.set(name, tar.slice(start, start + size));
    at = start + Math.ceil(size / 512) * 512;
  }
}
