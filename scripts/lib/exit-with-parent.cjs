/**
 * Preloaded (`node --require`, through NODE_OPTIONS) into every process `npm run demo` starts: the dashboard
 * (`next start`), the records service and the demo runtime. Those run in process groups of their own (so Ctrl-C
 * reaches only the demo, which stops them in order), so when the demo itself is killed with SIGKILL — or its terminal
 * goes away — nothing would stop them: the orphaned dashboard would keep the data directory and the ports, and the
 * next `npm run demo` could not start on the same data (docs/decisions/0011-crash-safety.md).
 *
 * With `CUSTODY_EXIT_WITH_PID=<pid>` set, this process checks twice a second that the process `<pid>` still exists;
 * once it is gone, it stops itself as a SIGTERM would (the dashboard and the runtime shut down as on Ctrl-C), and
 * exits with SIGKILL if that takes more than 10 s. Without the variable it does nothing.
 */
"use strict";

// CommonJS on purpose: `node --require` preloads it before any loader (tsx) is in place.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const fs = require("node:fs");

const watched = Number(process.env.CUSTODY_EXIT_WITH_PID);

/**
 * True while the process `pid` runs (signal 0 checks without sending anything). A zombie — dead, not yet reaped, as
 * where no init process reaps orphans — counts as gone (Linux: state Z or X in /proc/<pid>/stat).
 */
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: the id now belongs to another user's process, so ours is gone too.
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return true; // no /proc (macOS): signal 0 is all there is
  }
}

if (Number.isInteger(watched) && watched > 1 && watched !== process.pid) {
  const timer = setInterval(() => {
    if (alive(watched)) return;
    clearInterval(timer);
    setTimeout(() => process.kill(process.pid, "SIGKILL"), 10_000).unref();
    process.kill(process.pid, "SIGTERM");
  }, 500);
  timer.unref();
}
