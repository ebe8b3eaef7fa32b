import type { Metadata } from "next";
import Link from "next/link";
import { can } from "@/lib/domain/authz";
import { attentionQueue, type AttentionItem } from "@/lib/domain/tasks/attention";
import { requirePageContext } from "@/lib/server/page-actor";
import { withSigningKey } from "@/lib/server/verb-context";
import { Id } from "@/components/ui/Id";
import { Time } from "@/components/ui/time";
import { LiveRefresh } from "@/components/LiveRefresh";

export const metadata: Metadata = { title: "Attention" };

/** What needs a person now, each row saying why and linking to the place to act. */
export default async function AttentionPage() {
  const ctx = await requirePageContext();
  const { actor } = ctx;
  const items = await attentionQueue(withSigningKey(ctx));
  const mayReconcile = can(actor, "side_effects.reconcile");
  const mayDecide = can(actor, "approvals.decide");
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-xl font-semibold">Needs attention</h1>
        <p className="text-sm text-neutral-600">Runs that cannot safely continue until someone acts.</p>
        <LiveRefresh name="attention" />
      </div>
      {items.length === 0 ? (
        <div
          className="rounded-lg border border-dashed border-neutral-300 bg-white p-8 text-center text-sm text-neutral-700"
          data-testid="attention-empty"
        >
          Nothing waits for a person right now.{" "}
          <Link href="/tasks" className="underline">
            See all tasks
          </Link>
          .
        </div>
      ) : (
        <ul className="divide-y divide-neutral-100 rounded-lg border border-neutral-200 bg-white">
          {items.map((i) => (
            <li
              key={`${i.kind}/${i.task_id}/${"side_effect" in i ? i.side_effect : ""}`}
              className="flex flex-wrap items-center gap-x-4 gap-y-1 px-4 py-3 text-sm"
              data-testid="attention-item"
              data-kind={i.kind}
              data-task={i.task_id}
            >
              <KindBadge kind={i.kind} />
              <span className="min-w-0 break-words">
                <WithTaskId text={i.why} taskId={i.task_id} />
              </span>
              {i.kind === "side_effect_unknown" && i.reason ? (
                <span className="text-xs text-neutral-600">{i.reason}</span>
              ) : null}
              <span className="text-xs text-neutral-500">
                since <Time iso={i.since} />
              </span>
              <Link
                href={i.href}
                className={
                  i.kind === "side_effect_unknown" && mayReconcile
                    ? "ml-auto rounded-md bg-amber-700 px-2.5 py-1 text-xs font-semibold text-white hover:bg-amber-800"
                    : "ml-auto rounded-md border border-neutral-300 px-2.5 py-1 text-xs text-neutral-800 hover:bg-neutral-50"
                }
              >
                {i.kind === "side_effect_unknown"
                  ? mayReconcile
                    ? "Reconcile"
                    : "Open (a responder reconciles)"
                  : i.kind === "approval_rejected"
                    ? "Open approval"
                    : i.kind === "approval_stale"
                      ? mayDecide
                        ? "Re-approve"
                        : "Open approval"
                      : i.kind === "side_effect_awaiting_approval" && i.approval_id
                        ? mayDecide
                          ? "Decide"
                          : "Open approval"
                        : "Open task"}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

const KIND: Record<AttentionItem["kind"], { icon: string; label: string; cls: string }> = {
  side_effect_unknown: { icon: "?", label: "unknown", cls: "border-amber-300 bg-amber-50 text-amber-900" },
  principal_revoked: { icon: "✕", label: "principal revoked", cls: "border-red-300 bg-red-50 text-red-800" },
  approval_stale: { icon: "!", label: "approval stale", cls: "border-amber-300 bg-amber-50 text-amber-900" },
  approval_rejected: { icon: "✕", label: "approval rejected", cls: "border-red-300 bg-red-50 text-red-800" },
  side_effect_awaiting_approval: {
    icon: "◔",
    label: "awaiting approval",
    cls: "border-sky-200 bg-sky-50 text-sky-800",
  },
};

/** Why an item is in the queue: icon and word (never colour alone). */
function KindBadge({ kind }: { kind: AttentionItem["kind"] }) {
  const k = KIND[kind];
  return (
    <span className={`inline-flex items-center gap-1 rounded-full border px-2 py-0.5 text-xs font-medium ${k.cls}`}>
      <span aria-hidden="true">{k.icon}</span> {k.label}
    </span>
  );
}

/** The item's sentence with its task id shown as an id (one line, never broken mid-token). */
function WithTaskId({ text, taskId }: { text: string; taskId: string }) {
  const at = text.indexOf(taskId);
  if (at < 0) return <>{text}</>;
  return (
    <>
      {text.slice(0, at)}
      <Id value={taskId} inline />
      {text.slice(at + taskId.length)}
    </>
  );
}
