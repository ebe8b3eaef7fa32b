"use client";

/**
 * The form that starts an exercise: where the run is interrupted (one of the demo runtime's points, or any phase or
 * transition of your own runtime) and the layers whose verification the exercise will set.
 */
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ApiError } from "@/lib/client/api";
import { fieldErrors, mapApi } from "@/lib/client/maps";
import type { MapLayer } from "@/lib/contract/maps";
import { defaultLayers, STEP_GUIDE } from "@/lib/domain/exercises/guide";
import { LAYER_GUIDE, MAP_LAYERS } from "@/lib/domain/maps/layers";
import { CRASH_POINTS, isCrashPoint, POINT_GUIDE, POINT_LAYERS } from "@/lib/demo/interruption-points";

const OTHER = "__other";

export function NewExerciseForm({ mapId }: { mapId: string }) {
  const router = useRouter();
  const [choice, setChoice] = useState<string>(CRASH_POINTS[1]);
  const [other, setOther] = useState("");
  // A demo runtime point covers only the layers it can test; another point, every layer a step exercises.
  const layersFor = (c: string): MapLayer[] => (isCrashPoint(c) ? [...POINT_LAYERS[c].tests] : defaultLayers());
  const [layers, setLayers] = useState<MapLayer[]>(layersFor(CRASH_POINTS[1]));
  const choose = (c: string) => {
    setChoice(c);
    setLayers(layersFor(c));
  };
  const cannot = isCrashPoint(choice) ? POINT_LAYERS[choice].cannot : {};
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ message: string; fields: Record<string, string> } | null>(null);
  const point = choice === OTHER ? other : choice;
  return (
    <form
      className="space-y-4 rounded-lg border border-neutral-200 bg-white p-4"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          const ex = await mapApi.createExercise(mapId, { interruption_point: point, layers });
          router.push(`/maps/${mapId}/exercises/${ex.id}`);
        } catch (err) {
          setError({
            message: err instanceof Error ? err.message : String(err),
            fields: err instanceof ApiError ? fieldErrors(err.details) : {},
          });
          setBusy(false);
        }
      }}
    >
      <fieldset className="space-y-2">
        <legend className="text-sm font-semibold">Interruption point</legend>
        <p className="text-xs text-neutral-700">
          The demo runtime can lose its sandbox at these transitions; for your own runtime, name a phase or transition.
        </p>
        {CRASH_POINTS.map((p) => (
          <label key={p} className="flex items-start gap-2 text-sm">
            <input type="radio" name="point" className="mt-1" checked={choice === p} onChange={() => choose(p)} />
            <span>
              <code className="font-mono text-xs font-semibold">{p}</code> — {POINT_GUIDE[p].transition}
              <span className="block text-xs text-neutral-700">{POINT_GUIDE[p].knows}</span>
            </span>
          </label>
        ))}
        <label className="flex items-start gap-2 text-sm">
          <input type="radio" name="point" className="mt-1" checked={choice === OTHER} onChange={() => choose(OTHER)} />
          <span className="flex-1">
            Another phase or transition
            {choice === OTHER ? (
              <input
                aria-label="Phase or transition"
                className="mt-1 block w-full rounded-md border border-neutral-400 px-2 py-1.5 text-sm"
                value={other}
                onChange={(e) => setOther(e.target.value)}
                placeholder="e.g. after the first tool write, before its checkpoint"
              />
            ) : null}
          </span>
        </label>
        {error?.fields.interruption_point ? (
          <p className="text-xs text-red-800" role="alert">
            {error.fields.interruption_point}
          </p>
        ) : null}
      </fieldset>
      <fieldset className="space-y-1">
        <legend className="text-sm font-semibold">Layers the exercise covers</legend>
        <p className="text-xs text-neutral-700">
          Checked: the layers this point can test. Completing the exercise sets a layer&apos;s verification only when
          the steps that test it passed with evidence (verified), or failed when one was not as expected.
        </p>
        <div className="grid gap-1 sm:grid-cols-2">
          {MAP_LAYERS.map((l) => (
            <label key={l} className="flex items-center gap-2 text-sm">
              <input
                type="checkbox"
                checked={layers.includes(l)}
                onChange={(e) =>
                  setLayers(
                    e.target.checked
                      ? MAP_LAYERS.filter((x) => x === l || layers.includes(x))
                      : layers.filter((x) => x !== l),
                  )
                }
              />
              {LAYER_GUIDE[l].label}
              <span className="text-xs text-neutral-600">
                {Object.values(STEP_GUIDE)
                  .filter((g) => g.layers.includes(l))
                  .map((g) => g.label.toLowerCase())
                  .join(", ")}
                {cannot[l] ? (
                  <span className="block text-amber-900">Not testable at this point: {cannot[l]}.</span>
                ) : null}
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      <button
        className="rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-60"
        disabled={busy || !point.trim() || layers.length === 0}
      >
        {busy ? "Starting…" : "Start the exercise"}
      </button>
      {error ? (
        <p role="alert" className="text-sm text-red-800">
          {error.message}
        </p>
      ) : null}
    </form>
  );
}
