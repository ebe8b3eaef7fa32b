"use client";

/**
 * The map's title, renamed in place by owners and admins (decision 0046): Rename opens a field with Save and Cancel;
 * Escape cancels; the server's message shows under the field when refused.
 */
import { useRouter } from "next/navigation";
import { useState } from "react";
import { mapApi } from "@/lib/client/maps";
import { FieldError, inputClass, smallButtonClass } from "./fields";

export function MapTitle({ mapId, initial, canEdit }: { mapId: string; initial: string; canEdit: boolean }) {
  const router = useRouter();
  const [title, setTitle] = useState(initial);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const view = await mapApi.update(mapId, { title: draft });
      setTitle(view.title);
      setEditing(false);
      router.refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  if (editing) {
    return (
      <form
        className="mt-1 flex flex-wrap items-center gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label className="sr-only" htmlFor="map-title-input">
          Map title
        </label>
        <input
          id="map-title-input"
          className={`${inputClass} w-auto min-w-0 flex-1 basis-64 text-base`}
          value={draft}
          maxLength={200}
          autoFocus
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              setEditing(false);
              setError(null);
            }
          }}
          aria-invalid={Boolean(error)}
          aria-describedby={error ? "map-title-err" : undefined}
        />
        <button type="submit" className={smallButtonClass} disabled={busy || !draft.trim()}>
          Save title
        </button>
        <button
          type="button"
          className={smallButtonClass}
          onClick={() => {
            setEditing(false);
            setError(null);
          }}
        >
          Cancel
        </button>
        {error ? <FieldError id="map-title-err" text={error} className="basis-full" /> : null}
      </form>
    );
  }
  return (
    <div className="flex flex-wrap items-baseline gap-2">
      <h1 className="text-xl font-semibold break-words" data-testid="map-title">
        {title}
      </h1>
      {canEdit ? (
        <button
          type="button"
          className={`${smallButtonClass} print:hidden`}
          onClick={() => {
            setDraft(title);
            setEditing(true);
          }}
        >
          Rename
        </button>
      ) : null}
    </div>
  );
}
