/**
 * Reading an HTTP body with a size cap: requests we accept and answers of lookup endpoints we call.
 */

/**
 * The stream's bytes as UTF-8 text, or null as soon as more than `limit` bytes arrived (the stream is then
 * cancelled, so an endless body costs at most `limit` bytes of memory).
 */
export async function readCappedText(body: ReadableStream<Uint8Array>, limit: number): Promise<string | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The stream's bytes, or null as soon as more than `limit` bytes arrived (the stream is then cancelled). */
export async function readCappedBytes(body: ReadableStream<Uint8Array>, limit: number): Promise<Buffer | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
