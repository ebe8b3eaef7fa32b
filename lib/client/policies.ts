"use client";
/**
 * Browser calls of the policy API (session cookie): lint and store a document as JSON or YAML text, activate a
 * version. @throws ApiError on a non-2xx answer.
 */
import { ApiError, apiFetch } from "./api";

export type PolicyFindingJson = { severity: "error" | "warning"; rule: string; path: string; message: string };

/** JSON when the text starts with `{`, else YAML. */
export function policyFormat(text: string): "json" | "yaml" {
  return text.trimStart().startsWith("{") ? "json" : "yaml";
}

async function sendText<T>(path: string, text: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: "POST",
      headers: { "content-type": policyFormat(text) === "json" ? "application/json" : "application/yaml" },
      body: text,
      credentials: "same-origin",
    });
  } catch {
    throw new ApiError(0, "network", "Could not reach the server. Check your connection and try again.");
  }
  const raw = await res.text();
  const body = raw ? (JSON.parse(raw) as unknown) : null;
  if (!res.ok) {
    const err = (body as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
    throw new ApiError(
      res.status,
      err?.code ?? "http_error",
      err?.message ?? `Request failed (${res.status}).`,
      err?.details,
    );
  }
  return body as T;
}

export const policyApi = {
  lint: (text: string) => sendText<{ valid: boolean; findings: PolicyFindingJson[] }>("/api/v1/policies/lint", text),
  store: (text: string) =>
    sendText<{ version: number; digest: string; valid: boolean; findings: PolicyFindingJson[] }>(
      "/api/v1/policies",
      text,
    ),
  activate: (version: number) =>
    apiFetch<{ version: number; previous: number | null; changed: boolean }>(`/api/v1/policies/${version}/activate`, {
      method: "POST",
    }),
};
