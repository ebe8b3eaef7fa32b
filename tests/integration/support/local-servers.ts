/**
 * Small local HTTP servers for the custody suites: the records service in a temporary directory, and a server
 * whose answers a test decides (a lookup that never answers, one with a fixed answer).
 * Everything is per test: no shared mutable state.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { startRecordsService, type RecordsService } from "@/scripts/records-service";

/** A records service in this process with its state in a fresh temporary directory; `close()` removes both. */
export async function startTempRecords(): Promise<RecordsService & { dir: string; stop: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-records-"));
  const service = await startRecordsService({ port: 0, stateFile: path.join(dir, "records.json") });
  return {
    ...service,
    dir,
    stop: async () => {
      await service.close().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type LocalServer = { url: string; requests: string[]; close: () => Promise<void> };

/**
 * A local HTTP server whose every answer is decided by `respond` (which may never answer: then the request is
 * held until the server closes). Records each request's URL.
 */
export async function localServer(
  respond: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<LocalServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? "");
    respond(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
