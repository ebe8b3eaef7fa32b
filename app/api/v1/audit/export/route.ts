import { exportAudit, parseAuditQuery } from "@/lib/domain/audit/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/audit/export?actor=&action=&from=&to=&task=&target= → every entry that matches the filters (the same
 * parse and rule as `GET /api/v1/audit`), newest first, as JSON Lines (`application/x-ndjson`, `Content-Disposition:
 * attachment`), streamed: read 500 entries at a time. Each line holds `tenant_id`, `seq`, `at`, `actor_kind`,
 * `actor_id`, `actor_label`, `action`, `target`, `details`, `prev_hash` and `hash`, which is all the entry's hash covers,
 * so each line checks offline and consecutive ones chain (decision 0048).
 * Who: `audit.read`, as the listing. Errors (JSON, before the first byte): 400 naming the parameter (also `before` and
 * `limit`, which an export does not take), 401, 403.
 */
export const GET = apiRoute(async ({ req, ctx, requestId }) => {
  const { filters } = parseAuditQuery(new URL(req.url).searchParams, { paging: false });
  const out = await exportAudit(ctx, filters);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // Up to 100 lines per chunk: the domain reads 500 entries per query, the network gets fewer, larger writes.
        let chunk = "";
        for (let i = 0; i < 100; i++) {
          const next = await out.lines.next();
          if (next.done) {
            if (chunk) controller.enqueue(encoder.encode(chunk));
            controller.close();
            return;
          }
          chunk += `${JSON.stringify(next.value)}\n`;
        }
        controller.enqueue(encoder.encode(chunk));
      } catch (err) {
        console.error(`[${requestId}] audit export stopped:`, err);
        controller.error(err);
      }
    },
    async cancel() {
      await out.lines.return(undefined);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="${out.filename}"`,
      "cache-control": "no-store",
    },
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
