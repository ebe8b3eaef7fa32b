/** Single sign-on's configuration from the environment (lib/config/single-sign-on.ts, decision 0041). */
import { describe, expect, it } from "vitest";
import { singleSignOnConfig } from "@/lib/config/single-sign-on";

const full = {
  CUSTODY_OIDC_ISSUER: "https://idp.example.test/realms/acme/",
  CUSTODY_OIDC_CLIENT_ID: "run-custody",
  CUSTODY_OIDC_CLIENT_SECRET: "s3cret",
};

describe("singleSignOnConfig", () => {
  it("is off without an issuer", () => {
    expect(singleSignOnConfig({})).toBeNull();
    expect(singleSignOnConfig({ CUSTODY_OIDC_ISSUER: "  ", CUSTODY_OIDC_CLIENT_ID: "x" })).toBeNull();
  });

  it("reads the issuer (without a trailing slash), the client and the button's name", () => {
    expect(singleSignOnConfig(full)).toEqual({
      issuer: "https://idp.example.test/realms/acme",
      clientId: "run-custody",
      clientSecret: "s3cret",
      name: "your identity provider",
    });
    expect(singleSignOnConfig({ ...full, CUSTODY_OIDC_NAME: " Okta " })?.name).toBe("Okta");
  });

  it("names what is missing or wrong", () => {
    expect(() => singleSignOnConfig({ ...full, CUSTODY_OIDC_CLIENT_ID: "" })).toThrow(/CUSTODY_OIDC_CLIENT_ID/);
    expect(() => singleSignOnConfig({ ...full, CUSTODY_OIDC_CLIENT_SECRET: undefined })).toThrow(
      /CUSTODY_OIDC_CLIENT_SECRET/,
    );
    expect(() => singleSignOnConfig({ ...full, CUSTODY_OIDC_ISSUER: "idp.example.test" })).toThrow(/not a URL/);
    expect(() => singleSignOnConfig({ ...full, CUSTODY_OIDC_ISSUER: "ftp://idp.example.test" })).toThrow(/http/);
  });
});
