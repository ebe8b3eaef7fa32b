import type { Metadata } from "next";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Run Custody", template: "%s · Run Custody" },
  description: "Custody of long-running agent runs: state, side effects and authority across restarts.",
};

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en" className="h-full antialiased">
      <body className="min-h-full bg-neutral-50 text-neutral-900">{children}</body>
    </html>
  );
}
