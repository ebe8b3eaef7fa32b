"use client";

import { useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { loadPage } from "@/lib/client/navigation";

type Workspace = { slug: string; name: string; role: string; current: boolean };

/**
 * The workspace this session works in; with more than one, a menu that switches the session to another
 * (`PUT /api/v1/me/workspace`) and reloads the dashboard there.
 */
export function WorkspaceSwitcher({ workspaces }: { workspaces: Workspace[] }) {
  const current = workspaces.find((w) => w.current);
  const [error, setError] = useState<string | null>(null);
  if (workspaces.length <= 1) {
    return (
      <span className="hidden sm:inline" title="Workspace" data-testid="workspace-name">
        {current?.name}
      </span>
    );
  }
  return (
    <span className="flex items-center gap-1">
      <label htmlFor="workspace-switcher" className="sr-only">
        Workspace
      </label>
      <select
        id="workspace-switcher"
        data-testid="workspace-switcher"
        className="max-w-48 rounded border border-neutral-300 bg-white px-1.5 py-0.5 text-sm text-neutral-800"
        value={current?.slug}
        onChange={async (e) => {
          setError(null);
          try {
            await apiFetch("/api/v1/me/workspace", { method: "PUT", body: { workspace: e.target.value } });
            loadPage("/");
          } catch (err) {
            setError(err instanceof Error ? err.message : String(err));
          }
        }}
      >
        {workspaces.map((w) => (
          <option key={w.slug} value={w.slug}>
            {w.name} ({w.role})
          </option>
        ))}
      </select>
      {error ? (
        <span role="alert" className="text-xs text-red-700">
          {error}
        </span>
      ) : null}
    </span>
  );
}
