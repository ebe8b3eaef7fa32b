import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db";
import { can } from "@/lib/domain/authz";
import { attentionQueue } from "@/lib/domain/tasks/attention";
import { requirePageActor } from "@/lib/server/page-actor";
import { Id } from "@/components/ui/Id";
import { Time } from "@/components/ui/time";

export const metadata: Metadata = { title: "Attention" };

/** What needs a person now, each row saying why and linking to the place to act. */
export default async function AttentionPage() {
  const actor = await requirePageActor();
  const items = await attentionQueue(await getDb(), actor);
  const mayReconcile = can(actor, "side_effects.reconcile");
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-xl font-semibold">Needs attention</h1>
        <p className="text-sm text-neutral-600">Runs that cannot safely continue until someone acts.</p>
      </div>
      {items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-neutral-300 bg-white p-8 text-center text-sm text-neutral-700" data-testid="attention-empty">
          Nothing waits for a person right now. <Link href="/tasks" className="underline">See all tasks</Link>.
        </div>
      ) : (
        <ul className="divide-y divide-neutral-100 rounded-lg border border-neutral-200 bg-white">
          {items.map((i) => (
            <li key={`${i.task_id}/${i.side_effect}`} className="flex flex-wrap items-center gap-x-4 gap-y-1 px-4 py-3 text-sm" data-testid="attention-item">
              <span className="inline-flex items-center gap-1 rounded-full border border-amber-300 bg-amber-50 px-2 py-0.5 text-xs font-medium text-amber-900">
                <span aria-hidden="true">?</span> unknown
              </span>
              <span className="min-w-0 max-w-full">
                <strong>{i.side_effect}</strong> of task <Id value={i.task_id} inline />: request sent, outcome not recorded.
              </span>
              <span className="text-xs text-neutral-600">{i.reason}</span>
              <span className="text-xs text-neutral-500">since <Time iso={i.since} /></span>
              <Link
                href={`/tasks/${encodeURIComponent(i.task_id)}?tab=side-effects&effect=${encodeURIComponent(i.side_effect)}`}
                className={
                  mayReconcile
                    ? "ml-auto rounded-md bg-amber-600 px-2.5 py-1 text-xs font-semibold text-white hover:bg-amber-700"
                    : "ml-auto rounded-md border border-neutral-300 px-2.5 py-1 text-xs text-neutral-800 hover:bg-neutral-50"
                }
              >
                {mayReconcile ? "Reconcile" : "Open (a responder reconciles)"}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
