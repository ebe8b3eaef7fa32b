import Link from "next/link";

/** Shown, with status 404, for a map or exercise this workspace does not have (also for other tenants'). */
export default function MapNotFound() {
  return (
    <div className="rounded-lg border border-neutral-200 bg-white p-8 text-sm" data-testid="map-not-found">
      <h1 className="text-lg font-semibold">Custody map not found</h1>
      <p className="mt-2 text-neutral-700">
        This workspace has no custody map (or exercise) at that address. It may belong to another workspace, or the link
        is incomplete.
      </p>
      <Link
        href="/maps"
        className="mt-4 inline-block rounded-md bg-neutral-900 px-3 py-1.5 font-medium text-white hover:bg-neutral-700"
      >
        Back to custody maps
      </Link>
    </div>
  );
}
