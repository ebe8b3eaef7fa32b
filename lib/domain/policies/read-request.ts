/**
 * Reading a policy document from an HTTP request: JSON (`application/json`) or YAML (`application/yaml`,
 * `application/x-yaml`, `text/yaml`), at most {@link MAX_POLICY_BYTES}.
 */
import { DomainError } from "../errors";
import { isJsonMediaType, mediaType } from "../web/media-type";
import { readCappedText } from "../web/read-capped";
import { MAX_POLICY_BYTES } from "./document";

const YAML_TYPES = new Set(["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"]);

/**
 * The request's body text and its format, read from `content-type`.
 * @throws DomainError unsupported_media_type (415: neither JSON nor YAML), payload_too_large (413),
 *   invalid_json (400: no body).
 */
export async function readPolicyRequest(req: Request): Promise<{ text: string; format: "json" | "yaml" }> {
  const type = mediaType(req);
  const format = isJsonMediaType(type) ? "json" : YAML_TYPES.has(type) ? "yaml" : null;
  if (!format) {
    throw new DomainError(
      "unsupported_media_type",
      `Send the policy as JSON (content-type: application/json) or YAML (content-type: application/yaml)${type ? `, not ${type.slice(0, 60)}` : ""}.`,
    );
  }
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  const tooLarge = () =>
    new DomainError("payload_too_large", `A policy document is at most ${MAX_POLICY_BYTES / 1024} KiB.`);
  if (Number.isFinite(declared) && declared > MAX_POLICY_BYTES) throw tooLarge();
  if (!req.body) throw new DomainError("invalid_json", "The request has no body; send the policy document.");
  const text = await readCappedText(req.body, MAX_POLICY_BYTES);
  if (text === null) throw tooLarge();
  if (!text.trim()) throw new DomainError("invalid_json", "The request body is empty; send the policy document.");
  return { text, format };
}
