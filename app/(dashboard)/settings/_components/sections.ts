/** The Settings sections in the order the nav shows them; `/settings` redirects to the first (next.config.ts). */
export const SETTINGS_SECTIONS = [
  { href: "/settings/members", label: "Members" },
  { href: "/settings/api-keys", label: "Runtime API keys" },
  { href: "/settings/approvals", label: "Approvals" },
  { href: "/settings/lookups", label: "Lookups" },
  { href: "/settings/notifications", label: "Notifications" },
  { href: "/settings/export", label: "Export" },
  { href: "/settings/retention", label: "Retention" },
] as const;
