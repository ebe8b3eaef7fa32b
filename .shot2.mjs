import { chromium } from "@playwright/test";
const base = "http://localhost:3440";
const [,, email, path, prefix, ...sels] = process.argv;
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage({ viewport: { width: Number(process.env.W || 1280), height: 900 } });
await page.goto(base + "/login");
await page.getByLabel("Email").fill(email);
await page.getByLabel("Password").fill("demo-pass-123");
await page.getByRole("button", { name: "Sign in" }).click();
await page.waitForURL(/\/tasks|\/$/);
await page.goto(base + path);
await page.waitForTimeout(1500);
let i = 0;
for (const s of sels) {
  await page.locator(s).first().screenshot({ path: `/tmp/${prefix}-${i++}.png` });
}
await browser.close();
