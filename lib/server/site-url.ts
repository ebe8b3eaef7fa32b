/**
 * The address people open the dashboard at, for links the server hands out (invitations): `NEXTAUTH_URL` when
 * set (it must be, with PostgreSQL), else the origin the request came to.
 */
export function siteUrl(req: Request): string {
  const configured = process.env.NEXTAUTH_URL;
  if (configured) return configured.replace(/\/+$/, "");
  const url = new URL(req.url);
  const host = req.headers.get("x-forwarded-host") ?? req.headers.get("host") ?? url.host;
  const proto = req.headers.get("x-forwarded-proto") ?? url.protocol.replace(/:$/, "");
  return `${proto}://${host}`;
}
