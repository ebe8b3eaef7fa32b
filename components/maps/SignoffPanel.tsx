"use client";

/**
 * The sign-off of the adoption decision (decision 0046): the latest published version, and whether a named reviewer
 * who was not its last editor signed it off (who, when, their note). A reviewer (owner, admin, approver) signs off
 * here; the last editor sees why they cannot — the server refuses them too.
 */
import { HourglassIcon } from "@/components/ui/HourglassIcon";
import { useState } from "react";
import { mapApi } from "@/lib/client/maps";
import type { MapStatus, MapVersionInfo, MapView } from "@/lib/contract/maps";
import { Time } from "@/components/ui/time";
import { ConfirmDialog } from "./ConfirmDialog";
import { inputClass, labelClass } from "./fields";

export function SignoffPanel({
  mapId,
  versions,
  status,
  me,
  canSignOff,
  onSigned,
}: {
  mapId: string;
  versions: MapVersionInfo[];
  status: MapStatus;
  me: string;
  canSignOff: boolean;
  onSigned: (view: MapView) => void;
}) {
  const [open, setOpen] = useState(false);
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const latest = versions[0];

  const sign = async () => {
    if (!latest) return;
    setBusy(true);
    setError(null);
    try {
      const view = await mapApi.signOff(mapId, { version: latest.version, ...(note.trim() ? { note } : {}) });
      onSigned(view);
      setOpen(false);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const isLastEditor = latest ? (latest.last_edited_by ?? "").toLowerCase() === me.toLowerCase() : false;
  return (
    <section
      aria-labelledby="signoff-h"
      className="rounded-lg border border-neutral-200 bg-white p-3 print:break-inside-avoid"
      data-testid="signoff"
    >
      <h2 id="signoff-h" className="text-sm font-semibold">
        Sign-off
      </h2>
      {!latest ? (
        <p className="mt-1 text-sm text-neutral-800" data-testid="signoff-state" data-state="unpublished">
          Not published yet. Publish a version; then a reviewer who did not edit it last signs it off.
        </p>
      ) : latest.signed_off_by ? (
        <div className="mt-1 text-sm" data-testid="signoff-state" data-state="signed">
          <p>
            <span aria-hidden="true" className="text-emerald-800">
              ✔{" "}
            </span>
            Version {latest.version} signed off by <strong className="break-all">{latest.signed_off_by}</strong>,{" "}
            <Time iso={latest.signed_off_at} /> (last edited by {latest.last_edited_by ?? "unknown"}).
          </p>
          {latest.signoff_note ? (
            <p className="mt-1 break-words whitespace-pre-wrap text-neutral-800">{latest.signoff_note}</p>
          ) : null}
          {status === "draft" ? (
            <p className="mt-1 text-xs text-neutral-700">
              The draft after it is not signed off; publish it and have it reviewed again.
            </p>
          ) : null}
        </div>
      ) : (
        <div className="mt-1 space-y-2 text-sm" data-testid="signoff-state" data-state="awaiting">
          <p>
            <HourglassIcon className="mr-1 text-amber-800" />
            Version {latest.version} awaits sign-off by a reviewer who did not edit it last (last edited by{" "}
            <span className="break-all">{latest.last_edited_by ?? "unknown"}</span>).
          </p>
          {canSignOff ? (
            isLastEditor ? (
              <p className="text-xs text-neutral-800" data-testid="signoff-self">
                You made the last change to this version, so another owner, admin or approver signs it off.
              </p>
            ) : (
              <button
                type="button"
                className="rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white print:hidden"
                onClick={() => {
                  setError(null);
                  setOpen(true);
                }}
              >
                Sign off v{latest.version}
              </button>
            )
          ) : null}
          {error && !open ? (
            <p role="alert" className="text-sm text-red-800">
              {error}
            </p>
          ) : null}
        </div>
      )}
      <ConfirmDialog
        open={open}
        title={latest ? `Sign off version ${latest.version}?` : "Sign off"}
        confirmLabel={latest ? `Sign off v${latest.version}` : "Sign off"}
        busy={busy}
        error={error}
        onConfirm={() => void sign()}
        onClose={() => setOpen(false)}
        testId="signoff-dialog"
      >
        <p>Your name and the time are recorded with the version, in the audit log and in both exports.</p>
        <label className={`${labelClass} block`}>
          Note (optional)
          <textarea
            className={`${inputClass} mt-1 min-h-[3rem]`}
            value={note}
            onChange={(e) => setNote(e.target.value)}
            maxLength={2000}
            rows={3}
          />
        </label>
      </ConfirmDialog>
    </section>
  );
}
