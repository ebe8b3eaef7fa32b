"use client";

/**
 * What to do about a `credential_*` reason of the gate (issue 24, decision 0043): the steps to issue a fresh credential
 * and let the server know, in a disclosure under the reason. The server never holds or issues credentials (the vault
 * does); it learns of the fresh one from the runtime's `credential.issued` event, and the gate re-reads the vault lane
 * in receive order (docs/concepts.md#receive-order): a revoked id stays revoked, so the fresh one needs a fresh id.
 */
import Link from "next/link";

/** The credential reference a reason's message names (`Credential <ref> …`), or a placeholder. */
function refOf(message: string): string {
  return /^Credential (\S+)/.exec(message)?.[1] ?? "<credential_ref>";
}

/** The steps, for one reason. `removedFromPolicy`: the current policy no longer declares the credential. */
export function FreshCredentialSteps({ message, taskId }: { message: string; taskId: string }) {
  const ref = refOf(message);
  const removed = message.includes("was removed from policy version");
  const event = JSON.stringify(
    {
      events: [
        {
          id: "<a new event id>",
          task_id: taskId,
          plane: "vault",
          type: "credential.issued",
          occurred_at: "<now, ISO 8601>",
          attrs: { credential_ref: ref, credential_id: "<the new credential's id>", expires_at: "<when it expires>" },
        },
      ],
    },
    null,
    2,
  );
  return (
    <details className="basis-full text-sm" data-testid="fresh-credential-steps">
      <summary className="cursor-pointer text-xs font-medium text-sky-800 underline">
        How to issue a fresh credential
      </summary>
      <ol className="mt-2 list-decimal space-y-2 pl-5 text-neutral-800">
        {removed ? (
          <li>
            The current policy no longer declares <code className="font-mono text-xs">{ref}</code>. Revoke it in your
            vault, then either issue a credential the current policy declares, or declare it again in a new policy
            version (
            <Link href="/policies" className="underline">
              Policies
            </Link>
            ).
          </li>
        ) : null}
        <li>
          In your vault, issue a new credential for <code className="font-mono text-xs">{ref}</code> with the hosts and
          lifetime the current policy declares. It needs a <strong>new credential id</strong>: a revoked or expired id
          is never valid again.
        </li>
        <li>
          Give it to the run, and have the runtime report it on the vault lane (its API key,{" "}
          <code className="font-mono text-xs">POST /api/v1/events</code>):
          <pre className="mt-1 max-w-full overflow-x-auto rounded bg-neutral-100 p-2 font-mono text-xs">{event}</pre>
        </li>
        <li>
          The gate reads the vault lane again on the next ask: this reason goes once the fresh credential is the latest
          for <code className="font-mono text-xs">{ref}</code>. Then the runtime resumes (
          <code className="font-mono text-xs">POST /api/v1/tasks/{"{id}"}/resume</code>).
        </li>
      </ol>
    </details>
  );
}
