/**
 * Reading and asserting the API's error responses (`{error: {code, message, details?}}`).
 * Everything is per test: no shared mutable state.
 */
import { expect } from "vitest";
import type { ApiErrorBody } from "@/lib/contract/api";
import type { ApiResponse } from "../helpers";

/** The `error` object of an error response (`{error: {code, message, details?}}`); an empty one when absent. */
export function errorOf(res: { body: unknown }): { code?: string; message: string; details?: unknown } {
  return (
    (res.body as { error?: { code?: string; message: string; details?: unknown } } | null)?.error ?? { message: "" }
  );
}

/** Code of the error body of a response, or undefined when the body has no error. */
export function errorCode(res: ApiResponse): string | undefined {
  return (res.body as { error?: { code?: string } } | null)?.error?.code;
}

/** Asserts an answer is `status` with the API's error shape, a given code and a non-empty message. */
export function expectError(res: { status: number; body: unknown; text: string }, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect((res.body as ApiErrorBody).error).toMatchObject({ code, message: expect.any(String) });
  expect((res.body as ApiErrorBody).error.message.length).toBeGreaterThan(0);
}
