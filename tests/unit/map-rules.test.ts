/**
 * The rules of a custody-map row and of an interruption exercise (docs/concepts.md#custody-maps): custodians must be
 * named parties — names that only look filled are refused in any case, spacing or punctuation, with a message asking
 * for both sides and the handoff; a cross-organization row needs a handoff; verified/failed need linked evidence; a
 * decision to constrain names the constraint and a request for evidence says what and from whom. Also the adoption
 * summary, the version diff, the Markdown export and the exercise completion rules.
 */
import { describe, expect, it } from "vitest";
import type { LayerRow } from "@/lib/contract/maps";
import { completionIssues, emptySteps } from "@/lib/domain/exercises/rules";
import { diffMaps } from "@/lib/domain/maps/diff";
import { LAYER_GUIDE, MAP_LAYERS } from "@/lib/domain/maps/layers";
import { cell, mapToMarkdown } from "@/lib/domain/maps/markdown";
import {
  custodianIssues,
  decisionIssues,
  handoffIssues,
  isPlaceholderName,
  joinEvidenceRequest,
  layerPatchSchema,
  layerRowIssues,
  mapImportSchema,
  splitEvidenceRequest,
  verificationIssues,
} from "@/lib/domain/maps/rules";
import { adoptionSummary, mapProgress } from "@/lib/domain/maps/summary";

const acme = (name: string) => ({ name, organization: "Acme" });

function row(layer: LayerRow["layer"], over: Partial<LayerRow> = {}): LayerRow {
  return {
    layer,
    custodians: [],
    handoff: "",
    evidence: LAYER_GUIDE[layer].evidence,
    recovery_path: LAYER_GUIDE[layer].recoveryPath,
    acceptance_question: LAYER_GUIDE[layer].acceptanceQuestion,
    verification: "unknown",
    verification_evidence: null,
    decision: null,
    decision_note: "",
    revision: 1,
    ...over,
  };
}

const eight = (over: Partial<LayerRow> = {}) => MAP_LAYERS.map((l) => row(l, over));

describe("names that only look filled", () => {
  const refused = [
    "",
    " ",
    "\t \n",
    "\u00a0\u2003",
    "shared",
    "Shared",
    "SHARED",
    "  sHaReD  ",
    "s h a r e d ".replace(/ /g, ""),
    "shared.",
    "“shared”",
    "sháred",
    "sha\u200bred",
    "everyone",
    "Everyone",
    "EVERYBODY",
    "all",
    "TBD",
    "tbd",
    "T.B.D.",
    "t b d",
    "TBC",
    "n/a",
    "N/A",
    "N / A",
    "n.a.",
    "NA",
    "to be decided",
    "To Be Determined",
    "not applicable",
    "-",
    "—",
    "?",
    "...",
    "shared team",
    "Shared responsibility",
    "the team",
    "both sides",
    "everyone and the team",
    "TBD / shared",
    "unknown",
    "nobody",
    "no one",
    "Ｓｈａｒｅｄ",
  ];
  it.each(refused)("refuses %j", (name) => {
    expect(isPlaceholderName(name)).toBe(true);
  });

  const accepted = [
    "Platform team",
    "Sandbox operations",
    "Shared Services",
    "Records API owners (Acme)",
    "Team A",
    "NAS storage",
    "Vault",
    "OpenAI",
    "Ops",
    "Anya",
    "Tbd Logistics Ltd",
  ];
  it.each(accepted)("accepts the real name %j", (name) => {
    expect(isPlaceholderName(name)).toBe(false);
  });

  it("explains the refusal: name both sides and the handoff, on the field that holds it", () => {
    const issues = custodianIssues([acme("Platform team"), { name: "  Shared ", organization: "Acme" }]);
    expect(issues).toEqual([
      {
        path: ["custodians", 1, "name"],
        message: expect.stringMatching(/"Shared" is not a custodian: name both sides .* handoff/),
      },
    ]);
    const empty = custodianIssues([{ name: "   ", organization: "Acme" }]);
    expect(empty[0]!.path).toEqual(["custodians", 0, "name"]);
    expect(empty[0]!.message).toMatch(/^An empty value is not a custodian: name both sides/);
    expect(empty[0]!.message).toMatch(/handoff/);
  });

  it("refuses organizations that only look filled, and duplicate parties", () => {
    expect(custodianIssues([{ name: "Vault team", organization: "tbd" }])[0]).toMatchObject({
      path: ["custodians", 0, "organization"],
    });
    expect(custodianIssues([{ name: "Vault team", organization: "n/a" }])[0]!.message).toMatch(/handoff/);
    expect(custodianIssues([acme("Vault team"), { name: "vault  TEAM", organization: "ACME" }])).toEqual([
      { path: ["custodians", 1], message: expect.stringMatching(/same party as custodians\.0/) },
    ]);
  });
});

describe("handoff between organizations", () => {
  it("is not needed inside one organization (any spelling of it)", () => {
    expect(handoffIssues([acme("Platform"), { name: "Security", organization: " ACME " }], "")).toEqual([]);
  });

  it("is required when custodians belong to different organizations, naming them", () => {
    const issues = handoffIssues([acme("Records team"), { name: "Sandbox operations", organization: "VendorCo" }], "");
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toEqual(["handoff"]);
    expect(issues[0]!.message).toMatch(/Acme, VendorCo/);
    expect(issues[0]!.message).toMatch(/name both sides/);
  });

  it("refuses a handoff that only looks filled", () => {
    const two = [acme("Records team"), { name: "Sandbox operations", organization: "VendorCo" }];
    for (const h of ["shared", "TBD", "  ", "n/a", "both"]) expect(handoffIssues(two, h)).toHaveLength(1);
    expect(
      handoffIssues(two, "VendorCo sends the snapshot digest to the records team, who compare it with the manifest."),
    ).toEqual([]);
  });
});

describe("verification needs evidence", () => {
  it("stays unknown without a link; verified and failed require one", () => {
    expect(verificationIssues("unknown", null)).toEqual([]);
    expect(verificationIssues("verified", null)[0]).toMatchObject({ path: ["verification_evidence"] });
    expect(verificationIssues("failed", null)[0]!.message).toMatch(/only with evidence linked/);
    expect(verificationIssues("verified", { kind: "task", ref: "case-918" })).toEqual([]);
  });

  it("checks the reference's form by kind", () => {
    expect(verificationIssues("verified", { kind: "artifact", ref: "abc" })[0]).toMatchObject({
      path: ["verification_evidence", "ref"],
    });
    expect(verificationIssues("verified", { kind: "artifact", ref: `sha256:${"A".repeat(64)}` })).toEqual([]);
    expect(verificationIssues("verified", { kind: "exercise", ref: "not-a-uuid" })).toHaveLength(1);
    expect(verificationIssues("verified", { kind: "task", ref: "has space" })).toHaveLength(1);
    expect(verificationIssues("verified", { kind: "document", ref: "https://wiki.example/runbook" })).toEqual([]);
  });
});

describe("decisions", () => {
  it("accept needs nothing more; no decision yet is fine", () => {
    expect(decisionIssues("accept", "")).toEqual([]);
    expect(decisionIssues(null, "")).toEqual([]);
  });

  it("constrain needs the constraint", () => {
    expect(decisionIssues("constrain", "")[0]).toMatchObject({
      path: ["decision_note"],
      message: expect.stringMatching(/shorter runs/),
    });
    expect(decisionIssues("constrain", "  TBD ")).toHaveLength(1);
    expect(decisionIssues("constrain", "Reversible effects only")).toEqual([]);
    expect(decisionIssues("constrain", "Runs shorter than 20 minutes until receipts are kept")).toEqual([]);
  });

  it("request_evidence needs what is missing and from whom", () => {
    expect(decisionIssues("request_evidence", "")[0]!.message).toMatch(/what is missing and from whom/);
    expect(decisionIssues("request_evidence", "Revocation window for derived tokens")[0]!.message).toMatch(/from whom/);
    expect(decisionIssues("request_evidence", "Revocation window — from TBD")[0]!.message).toMatch(
      /"TBD" is not someone to ask/,
    );
    expect(decisionIssues("request_evidence", "Revocation window — from everyone")).toHaveLength(1);
    expect(decisionIssues("request_evidence", "from Identity team (Acme)")).toHaveLength(1);
    expect(
      decisionIssues(
        "request_evidence",
        joinEvidenceRequest("Revocation window for derived tokens", "Identity team (Acme)"),
      ),
    ).toEqual([]);
  });

  it("splits a request at the last 'from'", () => {
    expect(splitEvidenceRequest("Export from the harness — from Vendor support (VendorCo)")).toEqual({
      what: "Export from the harness",
      whom: "Vendor support (VendorCo)",
    });
    expect(splitEvidenceRequest("nothing here")).toBeNull();
  });
});

describe("row and import schemas", () => {
  it("a whole row collects every problem with its path", () => {
    const issues = layerRowIssues({
      ...row("tools"),
      custodians: [acme("Records team"), { name: "everyone", organization: "VendorCo" }],
      verification: "verified",
      decision: "constrain",
    });
    expect(issues.map((i) => i.path.join("."))).toEqual([
      "custodians.1.name",
      "handoff",
      "verification_evidence",
      "decision_note",
    ]);
  });

  it("a patch needs the revision and refuses unknown fields and control characters", () => {
    expect(layerPatchSchema.safeParse({ handoff: "x" }).error?.issues[0]?.path).toEqual(["revision"]);
    expect(layerPatchSchema.safeParse({ revision: 1, owner: "x" }).success).toBe(false);
    const bidi = layerPatchSchema.safeParse({ revision: 1, custodians: [{ name: "Ops\u202e", organization: "Acme" }] });
    expect(bidi.error?.issues[0]?.path).toEqual(["custodians", 0, "name"]);
    expect(
      layerPatchSchema.parse({ revision: 2, custodians: [{ name: "  Ops ", organization: " Acme " }] }).custodians,
    ).toEqual([{ name: "Ops", organization: "Acme" }]);
  });

  it("an import holds eight rows in the fixed order, each checked with its path", () => {
    const doc = { id: "x", workflow: "docs", title: "Map", version: 1, status: "draft", layers: eight() };
    expect(mapImportSchema.safeParse(doc).success).toBe(true);
    const swapped = { ...doc, layers: [doc.layers[1], doc.layers[0], ...doc.layers.slice(2)] };
    expect(mapImportSchema.safeParse(swapped).error?.issues[0]?.path).toEqual(["layers", 0, "layer"]);
    const bad = {
      ...doc,
      layers: doc.layers.map((l, i) =>
        i === 2 ? { ...l, custodians: [{ name: "Shared", organization: "Acme" }] } : l,
      ),
    };
    const res = mapImportSchema.safeParse(bad);
    expect(res.error?.issues.map((i) => i.path.join("."))).toEqual(["layers.2.custodians.0.name"]);
    expect(mapImportSchema.safeParse({ ...doc, layers: doc.layers.slice(0, 7) }).error?.issues[0]?.path).toEqual([
      "layers",
    ]);
  });
});

describe("adoption summary", () => {
  it("is not ready while a layer is undecided", () => {
    const s = adoptionSummary(eight());
    expect(s).toMatchObject({ undecided: 8, recommendation: "not_ready" });
    expect(s.headline).toMatch(/8 of 8 layers have no decision/);
  });

  it("holds while evidence is requested or an accepted layer failed", () => {
    const rows = eight({ decision: "accept" });
    rows[4] = row("credentials", {
      decision: "request_evidence",
      decision_note: "Revocation window — from Identity team (Acme)",
    });
    const s = adoptionSummary(rows);
    expect(s).toMatchObject({ accepted: 7, evidence_requested: 1, recommendation: "hold" });
    expect(s.reasons.join(" ")).toMatch(/Revocation window, from Identity team \(Acme\)/);
    const failed = eight({ decision: "accept" });
    failed[2] = row("tools", {
      decision: "accept",
      verification: "failed",
      verification_evidence: { kind: "task", ref: "t-1" },
    });
    expect(adoptionSummary(failed).recommendation).toBe("hold");
  });

  it("adopts with constraints, or adopts when every layer is accepted", () => {
    const rows = eight({
      decision: "accept",
      verification: "verified",
      verification_evidence: { kind: "task", ref: "t" },
    });
    expect(adoptionSummary(rows)).toMatchObject({
      recommendation: "adopt",
      headline: "Adopt: every layer is accepted and verified.",
    });
    rows[2] = { ...rows[2]!, decision: "constrain", decision_note: "Reversible effects only" };
    const s = adoptionSummary(rows);
    expect(s).toMatchObject({ recommendation: "adopt_with_constraints", constrained: 1 });
    expect(s.reasons).toContain("Tools: constrained — Reversible effects only.");
  });

  it("counts progress", () => {
    const rows = eight();
    rows[0] = row("session_state", {
      custodians: [acme("Sessions")],
      verification: "verified",
      verification_evidence: { kind: "task", ref: "t" },
      decision: "accept",
    });
    rows[1] = row("compaction", { custodians: [{ name: "shared", organization: "Acme" }] });
    expect(mapProgress(rows)).toEqual({ total: 8, custodians_named: 1, verified: 1, failed: 0, decided: 1 });
  });
});

describe("comparing versions and the Markdown export", () => {
  const base = { id: "m", workflow: "docs", title: "Map", version: 1, status: "published" as const, layers: eight() };

  it("lists every changed field per layer, and nothing for revisions", () => {
    const next = {
      ...base,
      version: 2,
      status: "draft" as const,
      layers: base.layers.map((l) => ({ ...l, revision: l.revision + 3 })),
    };
    expect(diffMaps(base, next)).toEqual([]);
    next.layers[2] = { ...next.layers[2]!, custodians: [acme("Records team")], decision: "accept" };
    expect(diffMaps(base, next)).toEqual([
      { scope: "layer", layer: "tools", field: "custodians", before: "", after: "Records team (Acme)" },
      { scope: "layer", layer: "tools", field: "decision", before: "", after: "accept" },
    ]);
  });

  it("keeps the table a table", () => {
    expect(cell("a | b\nc")).toBe("a \\| b<br>c");
    expect(cell("  ")).toBe("—");
    const md = mapToMarkdown({
      ...base,
      layers: base.layers.map((l, i) => (i === 0 ? { ...l, custodians: [acme("Sessions | core")] } : l)),
    });
    expect(md).toMatch(/^# Map\n/);
    expect(md).toContain("| Session state | Sessions \\| core (Acme) |");
    expect(md.split("\n").filter((l) => l.startsWith("| ")).length).toBe(9);
    expect(md).toContain("Not ready to decide");
  });
});

describe("completing an exercise", () => {
  it("needs an outcome, a finding, every step marked and some evidence", () => {
    const steps = emptySteps();
    const issues = completionIssues({ layers: ["tools"], steps, outcome: null, finding: "" });
    expect(issues.map((i) => i.path.join("."))).toEqual([
      "outcome",
      "finding",
      "steps.0.status",
      "steps.1.status",
      "steps.2.status",
      "steps.3.status",
      "steps.4.status",
      "steps.5.status",
      "steps",
    ]);
    const done = steps.map((s) => ({ ...s, status: "passed" as const }));
    done[2] = { ...done[2]!, task_id: "case-918" };
    expect(
      completionIssues({
        layers: ["tools"],
        steps: done,
        outcome: "visible_stop",
        finding: "The gate stopped until the write was reconciled.",
      }),
    ).toEqual([]);
    expect(
      completionIssues({ layers: [], steps: done, outcome: "unsafe", finding: "It wrote the record twice." })[0]!.path,
    ).toEqual(["layers"]);
  });
});

describe("credentials in map text", () => {
  it("refuses a credential in any text of a map (kept for good, shown to every role), and keeps look-alikes", async () => {
    const { createMapSchema, custodianSchema } = await import("@/lib/domain/maps/rules");
    const token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    const bad = createMapSchema.safeParse({ workflow: "docs", title: `Map ${token}` });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toMatch(/^title looks like a credential value/);
    expect(custodianSchema.safeParse({ name: `Ops ${token}`, organization: "Acme" }).success).toBe(false);
    expect(
      createMapSchema.safeParse({ workflow: "document-processing", title: "Custody map for document processing" })
        .success,
    ).toBe(true);
  });
});
