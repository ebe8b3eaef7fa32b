/**
 * The Slack-compatible body of a notification (decision 0040): `{text, blocks}` as Slack's incoming webhooks (and
 * Mattermost, Discord's `/slack` endpoint) accept. It carries what the standard payload does — ids, names, reasons and
 * a link — as text.
 */
const TITLES: Record<string, string> = {
  "approval.requested": "Approval requested",
  "approval.stale": "Approval no longer valid",
  "side_effect.unknown": "Write outcome unknown",
  "gate.stopped": "Resume gate stopped a run",
  "task.needs_attention": "Task needs attention",
  "policy.activated": "Policy version activated",
  "egress.denied": "Egress denied",
  "egress.drift": "Egress host no longer admitted",
};

/** Slack mrkdwn with its three control characters escaped. */
function esc(v: unknown): string {
  return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** `{text, blocks}` for a payload `{type, timestamp, data}`. */
export function slackMessage(payload: { type: string; timestamp: string; data: Record<string, unknown> }): {
  text: string;
  blocks: unknown[];
} {
  const title = TITLES[payload.type] ?? payload.type;
  const { link, ...fields } = payload.data;
  const lines = Object.entries(fields)
    .filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => `*${esc(k)}*: ${esc(v)}`);
  const text = `${title}${typeof fields.task_id === "string" ? ` — task ${fields.task_id}` : ""}`;
  return {
    text: esc(text),
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: `*${esc(title)}*\n${lines.join("\n")}` } },
      ...(typeof link === "string"
        ? [{ type: "context", elements: [{ type: "mrkdwn", text: `<${esc(link)}|Open in Run Custody>` }] }]
        : []),
    ],
  };
}
