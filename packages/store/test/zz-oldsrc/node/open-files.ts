/**
 * Which files some process holds open for writing, from Linux's /proc (what `fuser` and `lsof`
 * read): a watch stores a file as soon as its writer has closed it, instead of waiting out a
 * quiet period (decision 0059, amended). The OS's notifications (inotify through
 * @parcel/watcher) do not say when a writer closes a file.
 *
 * Only what this process may read is seen: another user's process writing into the tree is
 * not, and a file it writes is stored once quiet for the settle time as before. Elsewhere than
 * Linux the answer is undefined and the settle time decides alone.
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

const O_ACCMODE = 0o3;
const O_RDONLY = 0o0;

/** Of `paths` (absolute), those open for writing in a process this one can see; undefined without /proc. */
export function openForWriting(paths: ReadonlySet<string>): Set<string> | undefined {
  if (process.platform !== 'linux') return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return undefined;
  }
  const open = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (!paths.has(target) || open.has(target)) continue;
      try {
        const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))?.[1];
        if (flags === undefined || (Number.parseInt(flags, 8) & O_ACCMODE) !== O_RDONLY) open.add(target);
      } catch {
        open.add(target); // closed meanwhile, or unreadable: not known to be done
      }
    }
  }
  return open;
}
