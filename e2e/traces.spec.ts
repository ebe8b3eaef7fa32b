/**
 * A run reported only as OpenTelemetry GenAI spans (OTLP/JSON to `POST /api/v1/traces`, decision 0039) shows on the task
 * page's four-lane timeline: the agent run and its model calls on the session lane, each tool call a bar paired with its
 * outcome on the tools lane, and the write left open by the interrupted run an amber bar whose outcome is unknown.
 */
import { expect, loginAs, newTaskId, test } from "./fixtures";

type Attr = { key: string; value: { stringValue?: string; boolValue?: boolean } };
const attr = (key: string, v: string | boolean): Attr => ({
  key,
  value: typeof v === "boolean" ? { boolValue: v } : { stringValue: v },
});

test("an OTLP-reported run shows on the four lanes with paired tool calls and an unknown write", async ({
  page,
  request,
  tenant,
}) => {
  const taskId = newTaskId("otlp");
  const traceId = "7d1b2c3d4e5f60718293a4b5c6d7e8f9";
  const t0 = Date.now() - 120_000;
  const ns = (s: number) => String(BigInt(Math.round(t0 + s * 1000)) * BigInt(1_000_000));
  const span = (spanId: string, name: string, attrs: Attr[], start: number, end: number | null, error?: string) => ({
    traceId,
    spanId,
    name,
    kind: "SPAN_KIND_INTERNAL",
    startTimeUnixNano: ns(start),
    ...(end === null ? {} : { endTimeUnixNano: ns(end) }),
    attributes: attrs,
    status: error ? { code: "STATUS_CODE_ERROR", message: error } : {},
  });
  const toolCalls = JSON.stringify([
    { role: "assistant", parts: [{ type: "tool_call", id: "call_e2e_1", name: "lookup_order", arguments: { id: 1 } }] },
  ]);
  const body = {
    resourceSpans: [
      {
        resource: { attributes: [attr("service.name", "support-agent"), attr("custody.task_id", taskId)] },
        scopeSpans: [
          {
            spans: [
              span(
                "a000000000000001",
                "chat",
                [attr("gen_ai.operation.name", "chat"), attr("gen_ai.output.messages", toolCalls)],
                1,
                2,
              ),
              span(
                "a000000000000002",
                "execute_tool lookup_order",
                [
                  attr("gen_ai.operation.name", "execute_tool"),
                  attr("gen_ai.tool.name", "lookup_order"),
                  attr("gen_ai.tool.call.id", "call_e2e_1"),
                ],
                3,
                4,
              ),
              span(
                "a000000000000003",
                "execute_tool refund_payment",
                [
                  attr("gen_ai.operation.name", "execute_tool"),
                  attr("gen_ai.tool.name", "refund_payment"),
                  attr("gen_ai.tool.call.id", "call_e2e_2"),
                  attr("custody.mutation", true),
                ],
                5,
                null,
              ),
              span(
                "a000000000000004",
                "invoke_agent support",
                [attr("gen_ai.operation.name", "invoke_agent"), attr("gen_ai.agent.name", "support")],
                0,
                8,
                "worker lost",
              ),
            ],
          },
        ],
      },
    ],
  };
  const res = await request.post("/api/v1/traces", {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: body,
  });
  expect(res.status(), await res.text()).toBe(200);
  expect(await res.json()).toEqual({});

  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}`);
  for (const plane of ["session", "environment", "tools", "vault"])
    await expect(page.locator(`[data-testid=timeline-lane][data-plane=${plane}]`)).toHaveCount(1);
  const tools = page.locator("[data-testid=timeline-lane][data-plane=tools]");
  await expect(tools.getByTestId("tool-call-bar")).toHaveCount(2);
  await expect(tools.locator('[data-testid=tool-call-bar][data-call-id="call_e2e_1"]')).toHaveAttribute(
    "data-status",
    "completed",
  );
  await expect(tools.locator('[data-testid=tool-call-bar][data-call-id="call_e2e_2"]')).toHaveAttribute(
    "data-status",
    "unknown",
  );
  await expect(
    page.locator("[data-testid=timeline-lane][data-plane=session]").getByTestId("timeline-mark").first(),
  ).toBeVisible();
});
