/**
 * The permissions table (lib/domain/authz.ts PERMISSIONS), read-only, so people can see who may do what. It is
 * the same table every server-side check reads.
 */
import { ROLES } from "@/db/schema/enums";
import { permissionMatrix } from "@/lib/domain/authz";
import { TableScroll } from "../_components/kit";

export function PermissionsTable() {
  const rows = permissionMatrix();
  return (
    <section
      id="permissions"
      aria-labelledby="permissions-h"
      className="rounded-lg border border-neutral-200 bg-white p-4"
    >
      <h2 id="permissions-h" className="text-base font-semibold">
        Who may do what
      </h2>
      <p className="mb-3 text-sm text-neutral-600">
        The server checks every request against this table. Beyond it: only an owner grants, changes or removes the
        owner role, and a workspace always keeps one owner.
      </p>
      <TableScroll label="Permissions by role">
        <table className="w-full min-w-[44rem] text-left text-sm" data-testid="permissions-table">
          <thead className="text-xs uppercase tracking-wide text-neutral-600">
            <tr>
              <th className="py-1">Action</th>
              {ROLES.map((r) => (
                <th key={r} className="px-1 py-1 text-center">
                  {r}
                </th>
              ))}
              <th className="px-1 py-1 text-center">runtime key</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.action} className="border-t border-neutral-100" data-action={p.action}>
                <td className="py-1.5">
                  {p.phrase} <span className="font-mono text-xs text-neutral-600">{p.action}</span>
                </td>
                {ROLES.map((r) => (
                  <Cell key={r} yes={p.roles.includes(r)} />
                ))}
                <Cell yes={p.runtime} />
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

function Cell({ yes }: { yes: boolean }) {
  return (
    <td className="px-1 py-1.5 text-center">
      {yes ? (
        <span className="text-emerald-800">
          <span aria-hidden="true">✔</span> yes
        </span>
      ) : (
        <span className="text-neutral-600">
          <span aria-hidden="true">–</span> no
        </span>
      )}
    </td>
  );
}
